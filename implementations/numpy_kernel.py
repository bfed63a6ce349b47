"""A RoPE apply kernel in numpy: ``make(expect)`` returns ``kernel(x, cos, sin)``, the form of flash-attention's
``apply_rotary_emb`` and of the kernels in vLLM and transformers: the caller builds the cos/sin table, the
kernel only rotates. It takes the table per dim (``kernel.table = "dim"``, shape (n, rotary_dim), both dims
of a pair holding its value where the convention writes the pair) or, built with ``table="pair"``, one value
per pair (n, rotary_dim/2); it rotates in float64 and casts once to the output dtype.
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.definitions import rotate
from ropespec.spec.expectation import Expect

DTYPES = ("float64", "float32", "float16")


def make(expect: Expect, table: str = "dim"):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy kernel computes {', '.join(DTYPES)}, not {expect.dtype}")
    a, b, oa, ob = expect.pair_index()
    per_pair = slice(None) if table == "pair" else oa  # one value per pair, or each pair's from its first output dim

    def kernel(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        xf = np.asarray(x, dtype=np.float64)
        c = np.asarray(cos, dtype=np.float64)[:, per_pair]
        s = np.asarray(sin, dtype=np.float64)[:, per_pair]
        out = xf.copy()
        out[:, oa], out[:, ob] = rotate(xf[:, a], xf[:, b], c, s)
        return out.astype(x.dtype)

    kernel.table = table
    return kernel
