"""transformers' apply signature, but k takes batch row 0's cos/sin for every row (left padding lost for keys)."""

import numpy as np

from ropespec.implementations.numpy_qk import make as make_qk

TARGETS = ("kernel.qk",)
DIAGNOSIS = "layout"
SOURCE = "per-row position ids ignored (transformers #22161, left padding)"
FORM = "qk"
EXPECT = {"head_dim": 64, "dtype": "float32", "n_heads": 4, "n_kv_heads": 2}


def make(expect):
    inner = make_qk(expect)

    def apply(q, k, cos, sin):
        q_out, _ = inner(q, k, cos, sin)
        c0, s0 = np.broadcast_to(cos[:1], cos.shape), np.broadcast_to(sin[:1], sin.shape)
        _, k_out = inner(q, k, c0, s0)
        return q_out, k_out

    return apply
