"""Liger-Kernel's Triton RoPE kernels, as a user calls them, checked through Triton's interpreter on a CPU (``pip
install -e '.[triton]'``) and compiled on a GPU:

    ropespec check ropespec.implementations.adapters.liger:rope --form qk --array torch
    ropespec check ropespec.implementations.adapters.liger:llama4 --layout bshd --array torch --expect '{"head_dim": 64, "convention": "interleaved"}'

``rope`` is ``LigerRopeFunction.apply(q, k, cos, sin)``, transformers' apply (q (b, h, s, d), cos/sin per dim, half
pairs); ``llama4`` builds Llama 4's complex ``freqs_cis`` for each token's position (float32 inverse frequencies, as
Llama 4's code) and calls ``LigerLlama4RopeFunction.apply(q, k, freqs_cis)``, q (b, s, h, d), interleaved pairs.
Each has its own backward (Liger's rope kernel has a BACKWARD_PASS branch; its Llama 4 kernel runs again with the
imaginary part negated). Without liger-kernel they decline.
"""

from __future__ import annotations

ARRAY = "torch"


try:  # imported with the TARGET, so that the report's header names the kernels it runs
    from liger_kernel.ops import llama4_rope as _llama4_rope
    from liger_kernel.ops import rope as _rope
except ImportError as _err:
    _llama4_rope = _rope = None
    _MISSING = f"liger-kernel is not installed (pip install -e '.[triton]'): {_err}"


def _liger(module):
    if module is None:
        raise NotImplementedError(_MISSING)
    return module


def rope(q, k, cos, sin):
    """LigerRopeFunction.apply(q, k, cos, sin): (q_embed, k_embed)."""
    try:
        return _liger(_rope).LigerRopeFunction.apply(q, k, cos, sin)
    except NotImplementedError as err:
        raise RuntimeError(str(err)) from None


def llama4(expect):
    """Liger's Llama 4 kernel in the bshd layout: x (batch, seq, heads, head_dim), positions (batch, seq)."""
    if expect.convention != "interleaved" or expect.rotary_dim != expect.head_dim or expect.multi_axis \
            or expect.method.scales:
        raise NotImplementedError("Liger's Llama 4 kernel rotates every dim in interleaved (complex) pairs, default "
                                  "frequencies")
    ops = _liger(_llama4_rope)
    import torch

    d = expect.head_dim
    inv_freq = 1.0 / (expect.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))

    def apply(x, positions):
        angles = positions.to(torch.float32)[..., None] * inv_freq.to(x.device)  # (b, s, d/2), as Llama 4 forms them
        freqs_cis = torch.polar(torch.ones_like(angles), angles)
        return ops.LigerLlama4RopeFunction.apply(x, x.clone(), freqs_cis)[0]

    return apply
