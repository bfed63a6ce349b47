"""transformers' apply signature in numpy: ``make(expect)`` returns ``apply(q, k, cos, sin) -> (q_embed,
k_embed)`` with q (batch, h_q, seq, head_dim), k (batch, h_kv, seq, head_dim) and cos/sin (batch, seq,
rotary_dim) one value per dim, broadcast over the heads as ``apply_rotary_pos_emb`` does (unsqueeze_dim=1);
pass-through dims copied. Float64 arithmetic, one rounding to the output dtype.
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.definitions import rotate as rotate_pair
from ropespec.spec.expectation import Expect

DTYPES = ("float64", "float32", "float16")


def make(expect: Expect):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy qk computes {', '.join(DTYPES)}, not {expect.dtype}")
    a, b, oa, ob = expect.pair_index()

    def rotate(x, c, s):
        xf = np.asarray(x, dtype=np.float64)
        out = xf.copy()
        out[..., oa], out[..., ob] = rotate_pair(xf[..., a], xf[..., b], c, s)
        return out.astype(x.dtype)

    def apply(q, k, cos, sin):
        c = np.asarray(cos, dtype=np.float64)[:, None][..., oa]  # (batch, 1, seq, pairs): over every head
        s = np.asarray(sin, dtype=np.float64)[:, None][..., oa]
        return rotate(q, c, s), rotate(k, c, s)

    return apply
