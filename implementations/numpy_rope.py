"""RoPE in numpy, vectorised over rows and pairs. Output in float64 or float32.

Angles are formed in float64 from float64 inverse frequencies and the rotation is done in float64,
then cast once to the output dtype, so a float32 result is within an ulp or so of the exact one.
"""

from __future__ import annotations

import numpy as np

from spec.expectation import Expect

DTYPES = ("float64", "float32")


def make(expect: Expect):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy RoPE computes {', '.join(DTYPES)}, not {expect.dtype}")
    if expect.rope_type != "default":
        raise NotImplementedError(f"rope_type {expect.rope_type!r} is not implemented")
    r = expect.rotary_dim
    inv_freq = expect.rope_theta ** (-np.arange(0, r, 2, dtype=np.float64) / r)
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))
    out_dtype = np.dtype(expect.dtype)

    def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        xf = np.asarray(x, dtype=np.float64)
        angles = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
        c, s = np.cos(angles), np.sin(angles)
        out = xf.copy()
        xa, xb = xf[:, a], xf[:, b]
        out[:, a] = xa * c - xb * s
        out[:, b] = xa * s + xb * c
        return out.astype(out_dtype)

    return rope
