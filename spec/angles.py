"""Accurate angles in float64: cos and sin of p * theta_i, correct to about an ulp at any position
below 2**53, with no arbitrary-precision arithmetic in the hot path.

A naive float64 product p * theta is off by up to |p * theta| * 2**-53 (1e-4 rad at p = 2**40), and
``cos`` of it inherits that error. The technique here (double-double arithmetic, FMA-free):

1. theta_i is split into hi + lo, two float64 numbers whose sum carries ~106 bits of the exact value
   (computed once with mpmath, from base ** (-2i/r) at 128 bits).
2. p * hi is formed exactly as a double-double with Dekker's TwoProduct: Veltkamp splitting cuts each
   factor into two 26-bit halves whose pairwise products are exact in float64; p * lo is added
   (its own rounding error is 2**-106 relative, negligible).
3. The angle is reduced modulo 2 pi in double-double (Cody-Waite with 2 pi held as three float64
   parts, each product k * C_j formed exactly with TwoProduct): the 40 or so leading bits that cancel
   come from the ~106 carried, so the reduced angle r + dr is right to ~2**-60 absolute.
4. cos(r + dr) = cos r - sin(r) dr and sin(r + dr) = sin r + cos(r) dr (dr is below an ulp of r).

The functions take an array namespace (numpy or torch) and use only +, -, *, round, cos and sin, so
the same code runs on numpy arrays and on torch tensors on any device.
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np

from ropespec.spec import tables
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect

_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's constant for float64


def _split(a):
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """(p, e) with p = fl(a * b) and p + e = a * b exactly (no overflow assumed)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _two_pi_parts() -> tuple[float, float, float]:
    with mpmath.workprec(256):
        tau = 2 * mpmath.pi
        c1 = float(tau)
        c2 = float(tau - c1)
        c3 = float(tau - c1 - c2)
    return c1, c2, c3


TWO_PI_1, TWO_PI_2, TWO_PI_3 = _two_pi_parts()


@lru_cache(maxsize=256)
def _table(key: tuple) -> tuple[np.ndarray, np.ndarray, float]:
    with mpmath.workprec(160):
        thetas = tables.frequencies(tables.expect_of_key(key), key[4])
        g = float(tables.attention_factor(tables.expect_of_key(key)))
    hi = np.array([float(t) for t in thetas])  # within an ulp; lo takes up the rest
    lo = np.array([float(t - mpmath.mpf(h)) for t, h in zip(thetas, hi)])
    return hi, lo, g


def theta_hi_lo(expect: Expect, seq_len: int | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """theta'_i of ``expect`` (its scaling method included) as float64 hi + lo, |lo| <= ulp(hi), and
    the attention factor, for a call of ``seq_len`` tokens where the type depends on it."""
    return _table(tables.table_key(expect, seq_len))


def pair_hi_lo(expect: Expect, seq_len: int | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`theta_hi_lo` per pair, each times its axis's scale (``axes_scale``) as a double-double again (TwoProduct
    of hi and the scale, lo times it): the frequency per unit of ``expect.pair_positions(..., scaled=False)``."""
    hi, lo, g = theta_hi_lo(expect, seq_len)
    if expect.axes_scale is None:
        return hi, lo, g
    sc = expect.pair_scales()
    h, e = two_prod(hi, sc)
    return two_sum(h, e + lo * sc) + (g,)


def pair_cos_sin(expect: Expect, positions, seq_len: int | None = None):
    """cos and sin of each pair's angle, (its axis's position + offset) x scale x theta_i, each within about an ulp,
    for rows' positions (n,) or (n, A): the offset added in float64 (exact for offsets of few bits, as stated ones
    are) and the scale folded into the frequencies exactly (:func:`pair_hi_lo`). Returns (c, s, g)."""
    hi, lo, g = pair_hi_lo(expect, seq_len)
    c, s = cos_sin(expect.pair_positions(positions, scaled=False), hi, lo)
    return c, s, g


def _two_prod_split(a, a_parts, b, b_parts, exact_a: bool = False):
    """two_prod(a, b) with both factors already split (a split is reused across products). ``exact_a``: a
    has at most 26 significant bits (its low part is 0), so two of the four partial products vanish."""
    (ah, al), (bh, bl) = a_parts, b_parts
    p = a * b
    if exact_a:
        return p, (ah * bh - p) + ah * bl
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


_TWO_PI_1_PARTS, _TWO_PI_2_PARTS = _split(TWO_PI_1), _split(TWO_PI_2)
_INV_TWO_PI = 1.0 / TWO_PI_1


def reduced_angles(positions, hi, lo, xp=np, small: bool | None = None):
    """p * theta mod 2 pi as a double-double (r, dr), |r| <= pi (to within an ulp), for float64 ``positions``
    of shape (n, 1) and float64 ``hi``, ``lo`` of shape (m,): results of shape (n, m).

    The same steps as written out in the module docstring, with each factor split once: positions and
    the table are split on their own small shapes, k once for both of its products, the constants at
    import; positions below 2**26 (every real sequence) skip the partial products of their zero low half. ``small``
    says whether every position is below 2**26 (found from the positions when None; a traced function, as under
    jax.jit, says it)."""
    p_parts = _split(positions)
    if small is None:
        small = bool((p_parts[1] == 0).all())
    s, e = _two_prod_split(positions, p_parts, hi, _split(hi), exact_a=small)
    e = e + positions * lo
    s, e = two_sum(s, e)  # renormalise: |e| <= ulp(s) / 2
    k = xp.round(s * _INV_TWO_PI)
    k_parts = _split(k)
    t1, t1e = _two_prod_split(k, k_parts, TWO_PI_1, _TWO_PI_1_PARTS)
    r, re = two_sum(s, -t1)
    re = re - t1e + e
    t2, t2e = _two_prod_split(k, k_parts, TWO_PI_2, _TWO_PI_2_PARTS)
    r, r2 = two_sum(r, -t2)
    re = re + r2 - t2e - k * TWO_PI_3
    return two_sum(r, re)


def cos_sin(positions, hi, lo, xp=np, small: bool | None = None):
    """cos and sin of p * theta_i, each within about an ulp, for every position and pair (``small``: as
    :func:`reduced_angles`)."""
    r, dr = reduced_angles(positions, hi, lo, xp, small)
    c, s = xp.cos(r), xp.sin(r)
    return c - s * dr, s + c * dr


def rounded_table(expect: Expect, positions) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of p theta'_i per position and pair (p the pair's own axis's for a multi-axis RoPE), exactly rounded to the output dtype: the table ropespec
    hands an apply kernel (--form kernel, qk). The attention factor is not in it: a kernel rotates; a table that
    carries the factor is the table builder's business."""
    pos = np.asarray(positions)
    pos = pos if expect.multi_axis and pos.ndim == 2 else pos.reshape(-1)
    c, s, _ = pair_cos_sin(expect, pos, int(pos.max()) + 1 if pos.size else None)
    return round_to(c, expect.dtype), round_to(s, expect.dtype)


def sinusoidal_layout(s, c, convention: str, xp=np):
    """The sinusoidal encoding's (n, d) rows from sin and cos of shape (n, d/2): "interleaved" puts sin
    at 2i and cos at 2i + 1 (the paper), "half" concatenates [sin | cos] (tensor2tensor, fairseq, GPT-J)."""
    if convention == "interleaved":
        return xp.stack([s, c], axis=-1).reshape(s.shape[0], 2 * s.shape[1])
    return xp.concatenate([s, c], axis=1)
