"""ropespec's Triton RoPE (ropespec.implementations.triton_kernels) in every form it fits, forward and backward, checked on a
CPU through Triton's interpreter (``pip install -e '.[triton]'``; a CPU worker switches the interpreter on) and
compiled on a GPU (``--device cuda``):

    ropespec check ropespec.implementations.triton_rope:make --array torch
    ropespec check ropespec.implementations.triton_rope:kernel --form kernel --array torch
    ropespec check ropespec.implementations.triton_rope:qk --form qk --array torch
    ropespec check ropespec.implementations.triton_rope:bshd --layout bshd --array torch
    ropespec check ropespec.implementations.triton_rope:thd --layout thd --array torch
    ropespec check ropespec.implementations.triton_rope:thd_per_token --layout thd --positions per-token --array torch

Each is a factory. ``make`` forms its table exactly (double-double, ropespec.spec.angles) and rounds it once to float32: it
promises the strict class. The kernel computes in float32, so float64 output is declined; the conventions are half
and interleaved. Every form is differentiable: its backward is the kernel with the sine negated.
"""

from __future__ import annotations

from ropespec.spec.angles import cos_sin, pair_hi_lo
from ropespec.spec.definitions import token_positions
from ropespec.spec.expectation import Expect

ARRAY = "torch"
DTYPES = ("float32", "bfloat16", "float16")


def _kernels():
    try:
        from ropespec.implementations import triton_kernels
    except ImportError as err:
        raise NotImplementedError(f"triton is not installed (pip install -e '.[triton]'): {err}") from None
    return triton_kernels


def _decline(expect: Expect) -> None:
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"the Triton kernel computes in float32: {', '.join(DTYPES)}, not {expect.dtype}")
    if expect.convention == "rope_interleave":
        raise NotImplementedError("the Triton kernel rotates pairs in place (half or interleaved)")


def kernels_for(expect: Expect):
    """ropespec.implementations.triton_kernels, for an expectation the kernel takes; NotImplementedError (the reason) for
    one it declines, or without triton."""
    _decline(expect)
    return _kernels()


def table(expect: Expect, positions):
    """cos and sin per pair (rows, rotary_dim/2) of torch positions (rows,) or (rows, A), exactly formed and rounded
    once to float32, times the attention factor."""
    import torch

    p = positions.to(torch.float64)
    hi, lo, g = pair_hi_lo(expect, int(positions.max()) + 1 if positions.numel() else None)  # x its axis's scale
    p = p[:, list(expect.pair_axes())] if expect.multi_axis and p.ndim == 2 else p[:, None]
    dev = positions.device
    if expect.axes_offset is not None:  # each pair turns by its axis's position plus the axis's offset
        p = p + torch.from_numpy(expect.pair_offsets()).to(dev)
    c, s = cos_sin(p, torch.from_numpy(hi).to(dev), torch.from_numpy(lo).to(dev), xp=torch)
    return (g * c).to(torch.float32), (g * s).to(torch.float32)


def _interleaved(expect: Expect) -> bool:
    return expect.convention == "interleaved"


def _rows(k, x, cos, sin, index, expect):
    return k.RopeRows.apply(x, cos, sin, index, _interleaved(expect))


def make(expect: Expect):
    """f(x (n, head_dim), positions (n,) or (n, A))."""
    k = kernels_for(expect)
    import torch

    def rope(x, positions):
        c, s = table(expect, positions)
        return _rows(k, x, c, s, torch.arange(len(x), device=x.device), expect)

    return rope


make.promise = {"angle_dtype": "exact", "inv_freq_dtype": "exact"}
make.axes = ("chunked", "interleaved", "per-axis", "parity")


def kernel(expect: Expect):
    """kernel(x (n, head_dim), cos, sin), one cos and one sin per pair (n, rotary_dim/2)."""
    k = kernels_for(expect)
    import torch

    def rotate(x, cos, sin):
        return _rows(k, x, cos.to(torch.float32), sin.to(torch.float32), torch.arange(len(x), device=x.device), expect)

    rotate.table = "pair"
    return rotate


def _per_pair(expect: Expect, t):
    """A per-dim table (..., rotary_dim) in the convention's layout as one value per pair (..., rotary_dim/2)."""
    r = expect.rotary_dim
    return t[..., 0:r:2] if _interleaved(expect) else t[..., : r // 2]


def qk(expect: Expect):
    """transformers' apply(q, k, cos, sin): q (b, h_q, s, d), k (b, h_kv, s, d), cos/sin (b, s, rotary_dim)."""
    kern = kernels_for(expect)
    import torch

    def apply(q, k, cos, sin):
        b, _, s_, d = q.shape
        c, s = (_per_pair(expect, t).to(torch.float32).reshape(b * s_, -1) for t in (cos, sin))
        out = []
        for x in (q, k):
            h = x.shape[1]
            index = (torch.arange(b, device=x.device)[:, None, None] * s_
                     + torch.arange(s_, device=x.device)[None, None, :]).expand(b, h, s_).reshape(-1)
            out.append(_rows(kern, x.reshape(-1, d), c, s, index, expect).reshape(x.shape))
        return out[0], out[1]

    return apply


def bshd(expect: Expect):
    """f(x (batch, seq, heads, head_dim), positions (batch, seq) or (batch, seq, A))."""
    k = kernels_for(expect)
    import torch

    def rope(x, positions):
        b, s_, h, d = x.shape
        c, s = table(expect, positions.reshape((b * s_,) + tuple(positions.shape[2:])))
        index = torch.arange(b * s_, device=x.device).repeat_interleave(h)
        return _rows(k, x.reshape(-1, d), c, s, index, expect).reshape(x.shape)

    return rope


bshd.promise = make.promise
bshd.axes = make.axes


def _packed(expect: Expect, per_token: bool):
    k = kernels_for(expect)
    import torch

    def rope(x, positions, cu_seqlens):
        t, h, d = x.shape
        pos = positions if per_token else torch.from_numpy(
            token_positions(positions.cpu().numpy(), cu_seqlens.cpu().numpy())).to(x.device)
        c, s = table(expect, pos)
        index = torch.arange(t, device=x.device).repeat_interleave(h)
        return _rows(k, x.reshape(-1, d), c, s, index, expect).reshape(x.shape)

    return rope


def thd(expect: Expect):
    """f(x (tokens, heads, head_dim), positions, cu_seqlens): one offset per sequence (flash-attention's varlen)."""
    return _packed(expect, per_token=False)


def thd_per_token(expect: Expect):
    """f(x (tokens, heads, head_dim), positions, cu_seqlens): one position per token (FlashInfer's apply_rope_pos_ids,
    transformers' packed position_ids)."""
    return _packed(expect, per_token=True)


for _f in (thd, thd_per_token):
    _f.promise = make.promise
