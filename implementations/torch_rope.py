"""RoPE in torch, for float32, float16 and bfloat16 tensors (float64 too), on any device.

The angle is formed and reduced modulo 2 pi in float64 double-double arithmetic (:mod:`spec.angles`,
the same technique as the numpy implementation, run on torch tensors), and the rotation is done in
float64, then cast once to the input's dtype: the result is within about half an ulp of the output
dtype at every position below 2**53. torch is imported lazily, so this module imports without torch
installed; ``make`` then declines with NotImplementedError.
"""

from __future__ import annotations

from spec.angles import cos_sin, theta_hi_lo
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
    hi64, lo64 = (torch.from_numpy(v) for v in theta_hi_lo(expect.rope_theta, expect.rotary_dim))
    a_idx, b_idx = (torch.tensor(ix) for ix in zip(*expect.pairs()))

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        dev = x.device
        c, s = cos_sin(positions.to(torch.float64)[:, None], hi64.to(dev), lo64.to(dev), xp=torch)
        a, b = a_idx.to(dev), b_idx.to(dev)
        xf = x.to(torch.float64)
        out = xf.clone()
        xa, xb = xf[:, a], xf[:, b]
        out[:, a] = xa * c - xb * s
        out[:, b] = xa * s + xb * c
        return out.to(x.dtype)

    return rope
