"""Black-box measurement of what an implementation computes: each pair's frequency and the attention
factor, read off the rotation of basis vectors.

One row x = sum of e_a over the first dim a of every pair (under the expected pairing) rotates each
pair independently: at position p the pair comes out as g (cos p theta_i, sin p theta_i). The angle at
p = 1 gives theta_i (every theta <= 1 < pi); doubling p, the angle is unwrapped against the previous
estimate, so the estimate sharpens like 1/p until the implementation's own angle error dominates.
A second row pins the call's length (seq_len), for the types whose table depends on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Measured:
    thetas: np.ndarray  # per pair
    attention_factor: float  # mean output norm / input norm over pairs at p = 1
    precision: np.ndarray  # per pair: relative uncertainty of theta (last step's disagreement)
    max_position: int  # the largest position used


def _angles(f, expect, p: int, seq_len: int | None) -> tuple[np.ndarray, np.ndarray]:
    d = expect.head_dim
    x = np.zeros((2, d))
    a = np.array([i for i, _ in expect.pairs()])
    b = np.array([j for _, j in expect.pairs()])
    x[0, a] = 1.0
    last = max(p, (seq_len or 1) - 1)
    y = f(x, np.array([p, last], dtype=np.int64))
    return np.arctan2(y[0, b], y[0, a]), np.hypot(y[0, a], y[0, b])


def measure(f, expect, *, seq_len: int | None = None, max_position: int | None = None) -> Measured:
    """Measure theta'_i and the attention factor of ``f`` (a float64-in, float64-out callable)."""
    top = min(max_position or expect.max_position, (seq_len or 1 << 62) - 1 if seq_len else 1 << 62) - 1
    phi, norm = _angles(f, expect, 1, seq_len)
    theta = phi.copy()
    g = float(np.mean(norm))
    prec = np.full_like(theta, 1.0)
    p = 1
    while 2 * p + 1 <= max(top, 1) and p < 1 << 40:
        p = 2 * p + 1
        wrapped, _ = _angles(f, expect, p, seq_len)
        predicted = p * theta
        turns = np.round((predicted - wrapped) / (2 * math.pi))
        est = (wrapped + 2 * math.pi * turns) / p
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.abs(est - theta) / np.abs(est)
        theta = est
    return Measured(theta, g, prec, p)
