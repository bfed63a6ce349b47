"""One head of attention with RoPE on q and k, in numpy: ``make(expect)`` returns
``attend(q, k, v, positions, causal)`` with (n, head_dim) arrays. V is not rotated."""

from __future__ import annotations

import numpy as np

from implementations.numpy_rope import make as make_rope


def make(expect):
    rope = make_rope(expect.replace(dtype="float64"))

    def attend(q, k, v, positions, causal):
        q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
        qr, kr = rope(q, positions), rope(k, positions)
        scores = qr @ kr.T / np.sqrt(q.shape[1])
        if causal:
            scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        return (w @ v).astype(expect.dtype)

    return attend
