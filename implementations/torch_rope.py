"""RoPE in torch, for float32, float16 and bfloat16 tensors (float64 too), on any device.

Angles are formed in float64 and the rotation is done in float64, then cast once to the input's
dtype: the result is within about half an ulp of the output dtype. torch is imported lazily, so
this module imports without torch installed; ``make`` then declines with NotImplementedError.
"""

from __future__ import annotations

from spec.expectation import Expect

ARRAY = "torch"
DTYPES = ("float32", "float16", "bfloat16", "float64")


def make(expect: Expect):
    try:
        import torch
    except ImportError:
        raise NotImplementedError("torch is not installed") from None
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"torch RoPE computes {', '.join(DTYPES)}, not {expect.dtype}")
    if expect.rope_type != "default":
        raise NotImplementedError(f"rope_type {expect.rope_type!r} is not implemented")
    r = expect.rotary_dim
    inv_freq64 = expect.rope_theta ** (-torch.arange(0, r, 2, dtype=torch.float64) / r)
    a_idx, b_idx = (torch.tensor(ix) for ix in zip(*expect.pairs()))

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        inv_freq = inv_freq64.to(x.device)
        a, b = a_idx.to(x.device), b_idx.to(x.device)
        angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
        c, s = torch.cos(angles), torch.sin(angles)
        xf = x.to(torch.float64)
        out = xf.clone()
        xa, xb = xf[:, a], xf[:, b]
        out[:, a] = xa * c - xb * s
        out[:, b] = xa * s + xb * c
        return out.to(x.dtype)

    return rope
