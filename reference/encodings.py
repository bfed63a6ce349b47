"""Exact references of the other encodings: the sinusoidal table (mpmath, rounded to float64) and one
head of attention with the exact RoPE (float64 softmax over exact rotations)."""

from __future__ import annotations

import numpy as np

from reference.rope import apply, cos_sin
from spec.expectation import Expect


def sinusoidal(expect: Expect, positions) -> np.ndarray:
    """PE(p) for every position: sin(p theta_i) and cos(p theta_i), theta_i = base^(-2i/d), in the
    expectation's layout ("interleaved": sin at 2i, cos at 2i + 1; "half": [sin | cos])."""
    plain = expect.replace(rope_scaling=None, rotary_dim=expect.head_dim)
    rows = []
    for p in np.asarray(positions).tolist():
        c, s = cos_sin(plain, int(p))
        c, s = np.array([float(v) for v in c]), np.array([float(v) for v in s])
        rows.append(np.stack([s, c], axis=-1).reshape(-1) if expect.convention == "interleaved" else np.concatenate([s, c]))
    return np.array(rows).reshape(len(rows), expect.head_dim)


def attention(expect: Expect, q, k, v, positions, causal: bool) -> np.ndarray:
    """softmax((R q)(R k)^T / sqrt(d)) v with the exact RoPE, in float64."""
    qr, kr = apply(expect, q, positions), apply(expect, k, positions)
    scores = qr @ kr.T / np.sqrt(q.shape[1])
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v
