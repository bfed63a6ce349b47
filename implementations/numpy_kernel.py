"""A RoPE apply kernel in numpy: ``make(expect)`` returns ``kernel(x, cos, sin)``, the form of flash-attention's
``apply_rotary_emb`` and of the kernels in vLLM and transformers: the caller builds the cos/sin table, the
kernel only rotates. It takes the table per dim (``kernel.table = "dim"``, shape (n, rotary_dim), both dims
of a pair holding its value where the convention writes the pair), reads one value per pair, rotates in
float64 and casts once to the output dtype.
"""

from __future__ import annotations

import numpy as np

from spec.expectation import Expect

DTYPES = ("float64", "float32", "float16")


def make(expect: Expect):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy kernel computes {', '.join(DTYPES)}, not {expect.dtype}")
    a, b, oa, ob = expect.pair_index()

    def kernel(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        xf = np.asarray(x, dtype=np.float64)
        c = np.asarray(cos, dtype=np.float64)[:, oa]  # one value per pair, from its first output dim
        s = np.asarray(sin, dtype=np.float64)[:, oa]
        out = xf.copy()
        xa, xb = xf[:, a], xf[:, b]
        out[:, oa] = xa * c - xb * s
        out[:, ob] = xa * s + xb * c
        return out.astype(x.dtype)

    kernel.table = "dim"
    return kernel
