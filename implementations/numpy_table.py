"""A cos/sin table builder in numpy: ``make(expect)`` returns ``table(positions) -> (cos, sin)``, as a
rotary-embedding module's forward does (transformers' ``*RotaryEmbedding``: one value per dim, [c | c] for the
half convention, times the attention factor). Frequencies and angles exact (double-double, ropespec.spec.angles), one
rounding to the output dtype.
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.angles import pair_cos_sin
from ropespec.spec.expectation import Expect

DTYPES = ("float64", "float32", "float16")


def make(expect: Expect):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy table computes {', '.join(DTYPES)}, not {expect.dtype}")
    _, _, oa, ob = expect.pair_index()
    dtype = np.dtype(expect.dtype)

    def table(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = np.asarray(positions, dtype=np.float64)
        c, s, g = pair_cos_sin(expect, pos, int(pos.max()) + 1 if pos.size else None)  # each pair on its own axis
        out = []
        for half in (g * c, g * s):
            full = np.empty((len(c), expect.rotary_dim))
            full[:, oa], full[:, ob] = half, half
            out.append(full.astype(dtype))
        return out[0], out[1]

    return table


make.promise = {"angle_dtype": "exact", "inv_freq_dtype": "exact"}
make.axes = ("chunked", "interleaved", "per-axis", "parity")
