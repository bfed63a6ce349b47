"""diffusers' multi-axis rotary code as factories: the image and video transformers' position embeddings and their
apply functions, called as the models call them, on rows x (n, head_dim) at positions (n, A).

    ropespec check ropespec.implementations.adapters.diffusers:flux --array torch --expect flux.1-dev
    ropespec check ropespec.implementations.adapters.diffusers:wan --array torch --dtype bfloat16 --expect wan2.1
    ropespec check ropespec.implementations.adapters.diffusers:ltx_video --array torch --expect examples/ltx_video_48.json

``flux``: ``FluxPosEmbed(theta, axes_dim)`` on the ids (n, A) and ``apply_rotary_emb(x, (cos, sin),
use_real_unbind_dim=-1)``; ``wan``: ``WanRotaryPosEmbed``'s per-axis tables (its buffers, the rows its forward
slices for a grid) gathered at each token's (t, h, w) and the rotation ``WanAttnProcessor`` applies. Needs
``diffusers`` (``pip install -e '.[diffusers]'``); without it they decline, as they do for an expectation the
model's code cannot express.
"""

from __future__ import annotations

import importlib
import types

ARRAY = "torch"


def _import(module: str):
    try:
        importlib.import_module("torch")
        return importlib.import_module(module)
    except ImportError:
        raise NotImplementedError("diffusers is not installed (pip install -e '.[diffusers]')") from None


def _per_axis(expect, model: str) -> None:
    if expect.axes_kind() != "per-axis":
        raise NotImplementedError(f"diffusers' {model} computes a ladder per axis (axes_dims_rope), not "
                                  f"{expect.axes_kind() or '1-D RoPE'}")
    if expect.convention != "interleaved":
        raise NotImplementedError(f"diffusers' {model} pairs interleaved, not {expect.convention}")
    if expect.rotary_dim != expect.head_dim:
        raise NotImplementedError(f"diffusers' {model} rotates every dim")


def flux(expect):
    """FLUX's FluxPosEmbed and apply_rotary_emb."""
    _per_axis(expect, "FluxPosEmbed")
    import torch

    flux_module = _import("diffusers.models.transformers.transformer_flux")
    embeddings = _import("diffusers.models.embeddings")
    pos_embed = flux_module.FluxPosEmbed(theta=expect.rope_theta, axes_dim=list(expect.axes_dims_rope))

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        with torch.no_grad():
            cos, sin = pos_embed(positions)  # (n, head_dim), float32
            out = embeddings.apply_rotary_emb(x[None, None], (cos, sin), use_real=True, use_real_unbind_dim=-1)
            return out[0, 0]

    return rope


flux.axes = ("per-axis",)


def _wan_apply(module):
    """The rotation WanAttnProcessor.__call__ applies: its nested apply_rotary_emb, the model's own code."""
    call = module.WanAttnProcessor.__call__
    code = next((c for c in call.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == "apply_rotary_emb"),
                None)
    if code is None:
        raise NotImplementedError("this diffusers' WanAttnProcessor has no nested apply_rotary_emb to call")
    return types.FunctionType(code, module.__dict__)


def wan(expect):
    """Wan 2.1's WanRotaryPosEmbed tables and WanAttnProcessor's rotation."""
    _per_axis(expect, "WanRotaryPosEmbed")
    import torch

    module = _import("diffusers.models.transformers.transformer_wan")
    d = expect.head_dim
    hw = 2 * (d // 6)
    if list(expect.axes_dims_rope) != [d - 2 * hw, hw, hw]:
        raise NotImplementedError(f"WanRotaryPosEmbed splits head_dim {d} into t, h, w = {d - 2 * hw}, {hw}, {hw} dims, "
                                  f"not {list(expect.axes_dims_rope)}")
    rotary = module.WanRotaryPosEmbed(attention_head_dim=d, patch_size=(1, 2, 2), max_seq_len=expect.max_position,
                                      theta=expect.rope_theta)
    apply = _wan_apply(module)
    dims = [rotary.t_dim, rotary.h_dim, rotary.w_dim]

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        with torch.no_grad():
            tables = []
            for buffer in (rotary.freqs_cos, rotary.freqs_sin):  # (max_seq_len, head_dim): the rows forward slices
                parts = buffer.to(x.device).split(dims, dim=1)
                tables.append(torch.cat([p[positions[:, a]] for a, p in enumerate(parts)], dim=1)[None, :, None, :])
            return apply(x[None, :, None, :], *tables)[0, :, 0]  # hidden states (batch, seq, heads, dim)

    return rope


wan.axes = ("per-axis",)


def ltx_video(expect):
    """LTX-Video's LTXVideoRotaryPosEmbed and transformer_ltx.apply_rotary_emb: the embedding's forward with
    video_coords at each token's (f, h, w), its own path for given coordinates (each axis over its base: base_num_frames,
    base_height, base_width), on rows x (n, dim) as hidden states (1, n, dim). It computes per-axis ascending ladders
    theta^linspace(0, 1, K), K = dim // 6, dealt per frequency (pair j = 3k + a), interleaved pairs, each axis's
    coordinate (2 i / base_a - 1) pi/2 = (i - base_a / 2) pi / base_a: axes_offset -base_a / 2 and axes_scale
    pi / base_a; the dim % 6 dims it pads at the front (cos 1, sin 0) pass through (rotary_start dim % 6: LTX-Video's
    inner dim 2048 turns dims 2..2047). Any other expectation is declined."""
    if expect.axes_kind() != "per-axis" or expect.convention != "interleaved":
        raise NotImplementedError("diffusers' LTXVideoRotaryPosEmbed computes a ladder per axis (axes_dims_rope) of "
                                  "interleaved pairs")
    import math

    import torch

    module = _import("diffusers.models.transformers.transformer_ltx")
    d = expect.head_dim
    bases = [math.pi / s for s in (expect.axes_scale or (math.pi,) * expect.n_axes)]
    offsets = expect.axes_offset or (0,) * expect.n_axes
    if (expect.n_axes != 3 or not expect.axes_interleaved or expect.axes_ladder != "ascending"
            or (expect.rotary_start, expect.rotary_dim) != (d % 6, d - d % 6)
            or any(abs(o + b / 2) > 1e-9 * b for o, b in zip(offsets, bases))):
        raise NotImplementedError("diffusers' LTXVideoRotaryPosEmbed computes three per-axis ascending ladders "
                                  "(axes_ladder ascending) dealt per frequency (axes_interleaved), each axis's "
                                  "coordinate (i - base/2) pi/base (axes_offset -base/2, axes_scale pi/base), its first "
                                  "dim mod 6 dims passing through (rotary_start dim mod 6)")
    b_f, b_h, b_w = (float(b) for b in bases)
    rotary = module.LTXVideoRotaryPosEmbed(dim=d, base_num_frames=b_f, base_height=b_h, base_width=b_w,
                                           theta=expect.rope_theta)

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        with torch.no_grad():
            coords = positions.T[None].to(torch.float32)  # video_coords (batch, 3, n)
            cos, sin = rotary(x[None], video_coords=coords)
            return module.apply_rotary_emb(x[None], (cos, sin))[0]

    return rope


ltx_video.axes = ("per-axis",)