"""RoPE in numpy, vectorised over rows and pairs. Output in float64 or float32.

Accurate at every position below 2**53: the angle p * theta_i is formed and reduced modulo 2 pi in
double-double arithmetic (:mod:`ropespec.spec.angles`: theta split into hi + lo from an exact source, exact
products by Veltkamp splitting, Cody-Waite reduction with 2 pi in three parts), so cos and sin are
right to about an ulp where a naive float64 product p * theta would be off by |p theta| 2**-53
(1e-4 rad at p = 2**40). The rotation is done in float64 and cast once to the output dtype.
Every scaling method of :mod:`ropespec.spec.scaling` is supported, and multi-axis RoPE (positions (n, A), each pair turning
with its own axis's position); the frequency table comes from the spec's
definition evaluated in mpmath (split into hi + lo), so formula errors are caught by the cross-checks
against transformers and the oracle values, not by comparing with the reference.
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.angles import pair_cos_sin
from ropespec.spec.expectation import Expect

DTYPES = ("float64", "float32")


def make(expect: Expect):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy RoPE computes {', '.join(DTYPES)}, not {expect.dtype}")
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))
    oa, ob = (np.array(ix) for ix in zip(*expect.out_pairs()))  # in place but for rope_interleave
    out_dtype = np.dtype(expect.dtype)

    def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        xf = np.asarray(x, dtype=np.float64)
        pos = np.asarray(positions, dtype=np.float64)
        # one call is one sequence: dynamic and longrope tables depend on its length, max(p) + 1
        # each pair at its own axis's coordinate (multi-axis), the scale folded into the frequencies exactly
        c, s, g = pair_cos_sin(expect, pos, int(pos.max()) + 1 if pos.size else None)
        c, s = g * c, g * s  # the attention factor (1 but for yarn and longrope)
        out = xf.copy()
        xa, xb = xf[:, a], xf[:, b]
        out[:, oa] = xa * c - xb * s
        out[:, ob] = xa * s + xb * c
        return out.astype(out_dtype)

    return rope


#: the precision class this factory promises and is checked at: angles and frequencies exact (double-double),
#: one rounding to the output dtype (within 2 ulp of the pair norm, tests/test_accuracy.py)
make.promise = {"angle_dtype": "exact", "inv_freq_dtype": "exact"}
#: the multi-axis RoPE it computes (positions (n, A)): every kind
make.axes = ("chunked", "interleaved", "per-axis", "parity")
