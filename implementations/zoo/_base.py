"""One parametrised numpy RoPE that zoo members bend in exactly one place each.

Every keyword is a hook for one real bug; with no keywords it computes correct RoPE in float64.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ropespec.spec.angles import theta_hi_lo
from ropespec.spec.expectation import Expect


def spec_table(expect: Expect, seq_len: int | None) -> tuple[np.ndarray, float]:
    """The correct table of ``expect`` for a call of ``seq_len`` tokens: (theta', attention factor)."""
    hi, lo, g = theta_hi_lo(expect, seq_len)
    return hi + lo, g


def mistaken_table(tag: str) -> Callable[[Expect, int | None], tuple[np.ndarray, float]]:
    """The table of an expectation's scaling method as one of its known mistakes makes it (the ``tag`` of
    :meth:`ropespec.spec.methods.ScalingMethod.mistakes`): the zoo member of that mistake, generated from the method's list."""
    def table(expect: Expect, seq_len: int | None) -> tuple[np.ndarray, float]:
        th0 = spec_table(expect.replace(rope_scaling=None), seq_len)[0]
        for t, _, tv in expect.method.mistakes(expect, seq_len, lambda e, n: spec_table(e, n)[0], th0):
            if t == tag:
                return np.asarray(tv, dtype=np.float64), spec_table(expect, seq_len)[1]
        raise NotImplementedError(f"rope_type {expect.rope_type!r} has no known mistake {tag!r}")

    return table


def build(
    expect: Expect,
    *,
    base: float | None = None,
    convention: str | None = None,
    rotary_dim: int | None = None,
    exponent_dim: int | None = None,
    positions_map: Callable[[np.ndarray], np.ndarray] | None = None,
    angle_scale: float = 1.0,
    angles: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    rotate: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
    post: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
    table: Callable[[Expect, int], tuple[np.ndarray, float]] | None = None,
):
    """A numpy RoPE for ``expect`` with one bug injected through a hook.

    base, convention, rotary_dim: used instead of the expectation's. exponent_dim: the dim the
    frequency exponent is normalised by (correct: rotary_dim). positions_map: applied to the
    positions before the angle. angle_scale: multiplies every angle. angles(p, theta) -> (n, r/2): how
    the angles are formed (correct: the float64 outer product). rotate(xa, xb, c, s) -> (ya, yb):
    the per-pair formula. post(x, out, positions) -> out: a last step on the result.
    table(expect, seq_len) -> (theta, g): the frequency table and attention factor of a call of
    seq_len = max(positions) + 1 tokens (correct: :func:`spec_table`).
    """
    if expect.dtype not in ("float64", "float32"):
        raise NotImplementedError(f"zoo members compute float64 and float32, not {expect.dtype}")
    if expect.method.scales and table is None:
        raise NotImplementedError(f"rope_type {expect.rope_type!r} is not implemented")
    r = rotary_dim or expect.rotary_dim
    geometry = expect.replace(rotary_dim=r, convention=convention or expect.convention)
    a, b = (np.array(ix) for ix in zip(*geometry.pairs()))
    oa, ob = (np.array(ix) for ix in zip(*geometry.out_pairs()))
    theta = (base or expect.rope_theta) ** (-np.arange(0, r, 2, dtype=np.float64) / (exponent_dim or r))
    out_dtype = np.dtype(expect.dtype)

    def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        xf = np.asarray(x, dtype=np.float64)
        p = np.asarray(positions)
        p = positions_map(p) if positions_map is not None else p
        p = np.asarray(p, dtype=np.float64)
        th, g = theta, 1.0
        if table is not None:
            th, g = table(expect, int(np.max(positions)) + 1 if np.size(positions) else 1)
        phi = angles(p, th) if angles is not None else p[:, None] * th[None, :]
        c, s = g * np.cos(angle_scale * phi), g * np.sin(angle_scale * phi)
        out = xf.copy()
        xa, xb = xf[:, a], xf[:, b]
        if rotate is None:
            out[:, oa], out[:, ob] = xa * c - xb * s, xa * s + xb * c
        else:
            out[:, oa], out[:, ob] = rotate(xa, xb, c, s)
        out = out.astype(out_dtype)
        return post(x, out, np.asarray(positions)) if post is not None else out

    return rope
