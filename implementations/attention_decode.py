"""Attention decoded with a KV cache, in numpy: ``make(expect)`` returns a decoder with
``prefill(q, k, v, positions)`` (the causal outputs of those rows) and ``step(q, k, v, position)`` (the
output of one more row). Keys are cached rotated, values unrotated; the query is rotated at its own
position (a NoPE layer turns neither); the softmax scale carries the expectation's temperature
(ropespec.implementations.attention). Consistent with the
full causal pass for every table that does not change with the length."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.attention import unturned
from ropespec.implementations.numpy_rope import make as make_rope
from ropespec.spec.tables import query_temperature, score_temperature


class Decoder:
    def __init__(self, expect):
        self.rope = make_rope(expect.replace(dtype="float64")) if expect.params("attention").turns else unturned
        self.k = np.zeros((0, expect.head_dim))
        self.v = np.zeros((0, expect.head_dim))
        self.scale = float(score_temperature(expect)) / np.sqrt(expect.head_dim)
        self.expect = expect

    def _query(self, q, positions):
        """The query rows turned, times their temperature by position (Llama 4's and Mistral's; 1 otherwise)."""
        return self.rope(q, positions) * query_temperature(self.expect, positions)[:, None]

    def _attend(self, qr):
        scores = qr @ self.k.T * self.scale
        n = self.k.shape[0]
        mask = np.tril(np.ones((qr.shape[0], n), dtype=bool), k=n - qr.shape[0])
        scores = np.where(mask, scores, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (w / w.sum(axis=1, keepdims=True)) @ self.v

    def prefill(self, q, k, v, positions):
        self.k = self.rope(np.asarray(k, dtype=np.float64), positions)
        self.v = np.asarray(v, dtype=np.float64).copy()
        return self._attend(self._query(np.asarray(q, dtype=np.float64), positions))

    def step(self, q, k, v, position):
        p = np.array([position])
        self.k = np.concatenate([self.k, self.rope(np.asarray(k, dtype=np.float64).reshape(1, -1), p)])
        self.v = np.concatenate([self.v, np.asarray(v, dtype=np.float64).reshape(1, -1)])
        return self._attend(self._query(np.asarray(q, dtype=np.float64).reshape(1, -1), p))


def make(expect):
    if expect.n_heads != 1:
        raise NotImplementedError("the numpy decoder is single-head")
    if expect.method.length_dependent:
        raise NotImplementedError("the cached keys would keep the table of their own length")
    return Decoder(expect)
