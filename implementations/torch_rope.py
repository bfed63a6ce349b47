"""RoPE in torch, for float32, float16 and bfloat16 tensors (float64 too), on any device.

The angle is formed and reduced modulo 2 pi in float64 double-double arithmetic (:mod:`ropespec.spec.angles`,
the same technique as the numpy implementation, run on torch tensors), and the rotation is done in
float64, then cast once to the input's dtype (a multi-axis RoPE's pairs each at their own axis's position): the result is within about half an ulp of the output
dtype at every position below 2**53. torch is imported lazily, so this module imports without torch
installed; ``make`` then declines with NotImplementedError.
"""

from __future__ import annotations

from ropespec.spec.angles import cos_sin, pair_hi_lo
from ropespec.spec.expectation import Expect

ARRAY = "torch"
DTYPES = ("float32", "float16", "bfloat16", "float64")


def make(expect: Expect):
    try:
        import torch
    except ImportError:
        raise NotImplementedError("torch is not installed") from None
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"torch RoPE computes {', '.join(DTYPES)}, not {expect.dtype}")
    a_idx, b_idx = (torch.tensor(ix) for ix in zip(*expect.pairs()))
    oa_idx, ob_idx = (torch.tensor(ix) for ix in zip(*expect.out_pairs()))  # in place but for rope_interleave
    axes = torch.tensor(expect.pair_axes())

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        dev = x.device
        # one call is one sequence: dynamic and longrope tables depend on its length, max(p) + 1
        hi, lo, g = pair_hi_lo(expect, int(positions.max()) + 1 if positions.numel() else None)  # x its axis's scale
        p = positions.to(torch.float64)
        p = p[:, axes.to(dev)] if expect.multi_axis else p[:, None]  # each pair at its own axis's position
        if expect.axes_offset is not None:  # plus its axis's offset
            p = p + torch.from_numpy(expect.pair_offsets()).to(dev)
        c, s = cos_sin(p, torch.from_numpy(hi).to(dev), torch.from_numpy(lo).to(dev), xp=torch)
        c, s = g * c, g * s  # the attention factor (1 but for yarn and longrope)
        a, b, oa, ob = a_idx.to(dev), b_idx.to(dev), oa_idx.to(dev), ob_idx.to(dev)
        xf = x.to(torch.float64)
        out = xf.clone()
        xa, xb = xf[:, a], xf[:, b]
        out[:, oa] = xa * c - xb * s
        out[:, ob] = xa * s + xb * c
        return out.to(x.dtype)

    return rope


#: the precision class this factory promises and is checked at (as numpy_rope's)
make.promise = {"angle_dtype": "exact", "inv_freq_dtype": "exact"}
#: the multi-axis RoPE it computes (positions (n, A)): every kind
make.axes = ("chunked", "interleaved", "per-axis", "parity")
