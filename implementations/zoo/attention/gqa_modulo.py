"""Grouped-query attention that gives query head h the kv head h % n_kv_heads (interleaved groups)."""

import numpy as np

from ropespec.implementations.attention import make as make_attention

TARGETS = ("attention.grouped-query",)
DIAGNOSIS = "convention"
SOURCE = "kv heads repeated with repeat_interleave vs tile (transformers' repeat_kv is contiguous)"
FAMILY = "attention"
EXPECT = {"head_dim": 8, "max_position": 8192, "dtype": "float64", "n_heads": 4, "n_kv_heads": 2}


def make(expect):
    d, kv = expect.head_dim, expect.n_kv_heads
    single = make_attention(expect.replace(n_heads=1, n_kv_heads=1))

    def attend(q, k, v, positions, causal):
        cols = lambda a, i: np.asarray(a)[:, i * d : (i + 1) * d]
        return np.concatenate([single(cols(q, h), cols(k, h % kv), cols(v, h % kv), positions, causal)
                               for h in range(expect.n_heads)], axis=1)

    return attend
