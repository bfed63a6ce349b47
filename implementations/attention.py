"""Attention with RoPE on q and k, in numpy: ``make(expect)`` returns ``attend(q, k, v, positions,
causal)``; q is (n, n_heads * head_dim), k and v (n, n_kv_heads * head_dim), heads contiguous, and
query head h reads key/value head h // (n_heads / n_kv_heads) (grouped-query attention). V is not
rotated. The scores' softmax scale is 1/sqrt(head_dim) times the expectation's temperature (DeepSeek's YaRN:
mscale(s, mscale_all_dim)^2, ropespec.spec.tables.score_temperature); each query row is multiplied by its temperature
by position after RoPE (Llama 4's and Mistral's, ropespec.spec.tables.query_temperature). A NoPE layer
(``attention_nope``: Llama 4's no_rope_layers) turns neither q nor k."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.numpy_rope import make as make_rope
from ropespec.spec.tables import query_temperature, score_temperature


def unturned(x, positions):
    """A NoPE layer's q and k: as they are."""
    return np.asarray(x, dtype=np.float64)


def make(expect):
    rope = make_rope(expect.replace(dtype="float64")) if expect.params("attention").turns else unturned

    d, group = expect.head_dim, expect.n_heads // expect.n_kv_heads
    scale = float(score_temperature(expect)) / np.sqrt(d)

    def head(q, k, v, positions, causal):
        # the query rows times their temperature by position after RoPE (1 but for Llama 4's and Mistral's)
        qr, kr = rope(q, positions) * query_temperature(expect, positions)[:, None], rope(k, positions)
        scores = qr @ kr.T * scale
        if causal:
            scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (w / w.sum(axis=1, keepdims=True)) @ v

    def attend(q, k, v, positions, causal):
        q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
        cols = lambda a, i: a[:, i * d : (i + 1) * d]
        outs = [head(cols(q, h), cols(k, h // group), cols(v, h // group), positions, causal)
                for h in range(expect.n_heads)]
        return np.concatenate(outs, axis=1).astype(expect.dtype)

    return attend
