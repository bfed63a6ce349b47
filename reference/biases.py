"""Exact references of the positional biases: ALiBi's slopes and bias, T5's relative-position buckets
(ropespec.spec.definitions evaluated with mpmath, rounded correctly to float64)."""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import mpmath as mp
import numpy as np

from ropespec.reference.rope import apply
from ropespec.spec import definitions

#: working precision of the bias references (bits): far past float64's 53, so every rounding to float64 is correct
PREC = 128


@lru_cache(maxsize=None)
def _slopes_mpf(n_heads: int, bias_max: float) -> tuple:
    with mp.workprec(PREC):
        return tuple(definitions.alibi_slopes(n_heads, lambda e: mp.mpf(2) ** e,
                                              lambda a, b: mp.mpf(a) / b, mp.mpf(bias_max)))


def alibi_slopes(n_heads: int, bias_max: float = 8.0) -> np.ndarray:
    """ALiBi's slope of every head, (n_heads,) float64, each correctly rounded."""
    return np.array([float(v) for v in _slopes_mpf(int(n_heads), float(bias_max))])


def alibi_bias(n_heads: int, q_positions, k_positions, bias_max: float = 8.0, symmetric: bool = False) -> np.ndarray:
    """ALiBi's bias -m_h (i - j) (or -m_h |i - j|), (n_heads, n_q, n_k) float64, each element the exact product of the
    exact slope and the integer distance, correctly rounded."""
    q, k = (np.asarray(v, dtype=np.int64).tolist() for v in (q_positions, k_positions))
    out = np.empty((n_heads, len(q), len(k)))
    with mp.workprec(PREC):
        for h, m in enumerate(_slopes_mpf(int(n_heads), float(bias_max))):
            for a, i in enumerate(q):
                out[h, a] = [float(definitions.alibi_bias(m, i, j, symmetric)) for j in k]
    return out


def _floor(v):
    """floor of a log-spaced bucket: a value within 2^-(PREC - 20) of a whole number is that number. The ratio of two
    logarithms of powers of one integer is an exact ratio (ln 8 / ln 32 (9 - 4) = 3: T5's (18, 128) at distance 32),
    which mpmath's last-bit rounding can leave just below it; no other value of these small integers lies that
    close to one."""
    near = mp.nint(v)
    return near if abs(v - near) < mp.mpf(2) ** -(PREC - 20) else mp.floor(v)


def t5_buckets(relative_positions, bidirectional: bool, num_buckets: int, max_distance: int,
               slack: Callable[[int, int, int], float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """T5's bucket of every relative position (exact logarithms), and the other bucket a computation whose log-spaced
    value is off by at most ``slack(n, max_distance, distance)`` may give (equal to the first where no whole number
    lies that close): (buckets, alternatives), int64 of the positions' shape. Read off one table per parameters
    (:func:`_t5_table`): every example of a property asks for the same distances."""
    rel = np.asarray(relative_positions, dtype=np.int64)
    exact, other, reach = _t5_table(bool(bidirectional), int(num_buckets), int(max_distance), slack)
    at = np.clip(rel, -reach, reach) + reach
    return exact[at], other[at]


@lru_cache(maxsize=256)
def _t5_table(bidirectional: bool, num_buckets: int, max_distance: int, slack) -> tuple[np.ndarray, np.ndarray, int]:
    """(buckets, alternatives, D) of every relative position -D .. D, D = 2 max_distance + 8. Past D every distance's
    bucket and alternative are D's: at and past max_distance the log-spaced value is at least max_exact, and past
    2 max_distance it is more than ln 2 / ln(max_distance / max_exact) above it (far beyond any slack), so both are the
    last bucket of the sign."""
    reach = 2 * max_distance + 8
    rel = np.arange(-reach, reach + 1)
    exact, other = np.empty_like(rel), np.empty_like(rel)
    with mp.workprec(PREC):
        log_ratio = lambda a, b: mp.log(mp.mpf(a) / b)  # noqa: E731
        for ix, d in enumerate(rel.tolist()):
            b = definitions.t5_bucket(d, bidirectional, num_buckets, max_distance, log_ratio, _floor)
            exact[ix], other[ix] = b, b
            offset, dist, n = definitions.t5_sign_split(d, bidirectional, num_buckets)
            if dist >= n // 2 and slack is not None:
                v, eps = definitions.t5_log_bucket(dist, n, max_distance, log_ratio), slack(n, max_distance, dist)
                for w in (v - eps, v + eps):
                    alt = offset + min(n // 2 + int(mp.floor(w)), n - 1)
                    if alt != b:
                        other[ix] = alt
    exact.flags.writeable = other.flags.writeable = False  # shared by every caller
    return exact, other, reach


def xpos_pair_scores(expect, q, k, m: int, k_positions) -> np.ndarray:
    """xPos's score of each rotated pair between the query q (d,) at m and each key row of k (n_k, d) at its position:
    (n_k, rotary_dim / 2) float64, zeta_i^((m - n) / scale_base) (mpmath, zeta_i over the rotary dims) times RoPE's
    exact R(m theta_i) q_i . R(n theta_i) k_i (reference.apply, each pair's dot in float64)."""
    plain = expect.replace(rope_scaling=None)
    kp = np.asarray(k_positions, dtype=np.int64)
    rq = apply(plain, np.asarray(q, dtype=np.float64)[None], np.array([m]))[0]
    rk = apply(plain, np.asarray(k, dtype=np.float64), kp)
    a, b = (np.array(ix) for ix in zip(*plain.out_pairs()))
    dots = rq[a][None] * rk[:, a] + rq[b][None] * rk[:, b]
    out = np.empty_like(dots)
    zetas = _zetas_mpf(plain.rotary_dim)
    with mp.workprec(PREC):
        for r, n in enumerate(kp.tolist()):
            out[r] = [float(definitions.xpos_pair_score(z, m, n, mp.mpf(expect.params("xpos").xpos_scale_base), mp.mpf(1))) for z in zetas]
    return out * dots


@lru_cache(maxsize=None)
def _zetas_mpf(rotary_dim: int) -> tuple:
    """xPos's zeta_i of every rotated pair (mpmath, gamma 2/5 exactly): the same for every example of a head."""
    with mp.workprec(PREC):
        return tuple(definitions.xpos_zeta(i, rotary_dim, lambda x, y: mp.mpf(x) / y, mp.mpf(2) / 5)
                     for i in range(rotary_dim // 2))


def xpos_zetas(expect) -> np.ndarray:
    """zeta_i of every rotated pair, float64."""
    return np.array([float(z) for z in _zetas_mpf(expect.rotary_dim)])


__all__ = ["PREC", "alibi_bias", "alibi_slopes", "t5_buckets", "xpos_pair_scores", "xpos_zetas"]
