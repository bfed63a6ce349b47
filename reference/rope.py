"""The exact RoPE reference, evaluated in mpmath and rounded correctly to float64.

theta_i = rope_theta ** (-2 i / r) for i < r/2 (r the rotary dim), changed by the expectation's
scaling method (:mod:`ropespec.spec.scaling`), and pair i of x is rotated by phi = p * theta_i and scaled by
the attention factor. The working precision is chosen from the position: phi has up to
bitlen(p) bits before the binary point, and cos/sin must be right to well below float64's 53 bits
after it, so the angle is formed with ``53 + GUARD_BITS + bitlen(p)`` bits (rounded up to a multiple
of 32 so that nearby positions share cached frequency tables). Every high-level precision change is
scoped with ``mpmath.workprec``; the hot path uses mpmath's raw ``libmp`` functions, which take the
precision as an argument and change no global state.

cos/sin are memoised per (frequency table, position): a batch of n distinct positions costs
n * r / 2 cos-sin evaluations, whatever the number of vectors or calls.

The rotation x_a cos - x_b sin is formed at the working precision from the exact float64 inputs and
rounded to nearest float64 once (``to_float(..., rnd='n')``; mpmath's own ``float()`` truncates).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import mpmath
import numpy as np
from mpmath import libmp

from ropespec.spec import tables
from ropespec.spec.dtypes import MANTISSA_BITS, round_to
from ropespec.spec.expectation import Expect

GUARD_BITS = 40
_PREC_STEP = 32


def working_prec(position) -> int:
    """Bits of working precision for angles at ``position`` (see module docstring; a coordinate's integer part)."""
    bits = 53 + GUARD_BITS + max(1, abs(int(position)).bit_length())
    return -(-bits // _PREC_STEP) * _PREC_STEP


_freq_key = tables.table_key
_expect_of = tables.expect_of_key


@lru_cache(maxsize=256)
def _thetas_raw(key: tuple, prec: int) -> tuple:
    with mpmath.workprec(prec + 16):
        return tuple(t._mpf_ for t in tables.frequencies(_expect_of(key), key[4]))


@lru_cache(maxsize=256)
def _attention_factor_raw(key: tuple, prec: int) -> tuple:
    with mpmath.workprec(prec + 16):
        return tables.attention_factor(_expect_of(key))._mpf_


def thetas_mpf(expect: Expect, prec: int = 128, seq_len: int | None = None) -> list[mpmath.mpf]:
    """The exact frequencies theta'_i as mpmath numbers of ``prec`` bits (for a call of ``seq_len``
    tokens where the type depends on it)."""
    return [mpmath.mpf(t) for t in _thetas_raw(_freq_key(expect, seq_len), prec)]


def thetas(expect: Expect, seq_len: int | None = None) -> np.ndarray:
    """The frequencies theta'_i, correctly rounded to float64 (shape (rotary_dim/2,))."""
    return np.array([libmp.to_float(t, rnd="n") for t in _thetas_raw(_freq_key(expect, seq_len), 128)])


def rates(expect: Expect, seq_len: int | None = None) -> np.ndarray:
    """Radians each pair turns per unit of its axis's position: theta'_i times its axis's scale (``axes_scale``;
    theta'_i itself without one), as a probe of an implementation measures them."""
    return thetas(expect, seq_len) * expect.pair_scales()


def attention_factor(expect: Expect) -> float:
    """The factor the rotated pairs are scaled by (1 but for yarn and longrope), rounded to float64."""
    return libmp.to_float(_attention_factor_raw(_freq_key(expect), 128), rnd="n")


def seq_len_of(positions: np.ndarray) -> int | None:
    """The sequence length transformers infers from a call's positions: max(position) + 1."""
    return int(np.max(positions)) + 1 if np.size(positions) else None


def _mpf_of(v) -> tuple:
    """An exact position or coordinate (an int, or a Fraction whose denominator is a power of two: every float is)
    as a raw mpmath number, exactly."""
    if isinstance(v, int):
        return libmp.from_int(v)
    den = v.denominator
    if den & (den - 1):
        raise ValueError(f"a coordinate must be a binary fraction (a float's value), got {v}")
    return libmp.from_man_exp(v.numerator, -(den.bit_length() - 1))


@lru_cache(maxsize=1 << 14)
def _cos_sin_raw(key: tuple, position) -> tuple[tuple, tuple, int]:
    """Per pair, g cos and g sin of p theta'_i at the working precision: ``position`` one exact number, or a multi-axis
    RoPE's vector of each axis's exact coordinate, each pair turning with its own axis's entry."""
    vector = isinstance(position, tuple)
    prec = working_prec(max(map(abs, position)) if vector else abs(position))
    if vector:
        axes = _expect_of(key).pair_axes()
        ps = [_mpf_of(position[a]) for a in axes]
    g = _attention_factor_raw(key, prec)
    cs, ss = [], []
    one = None if vector else _mpf_of(position)
    for j, t in enumerate(_thetas_raw(key, prec)):
        p = ps[j] if vector else one
        c, s = libmp.mpf_cos_sin(libmp.mpf_mul(p, t, prec + 8, "n"), prec, "n")
        cs.append(libmp.mpf_mul(c, g, prec, "n"))
        ss.append(libmp.mpf_mul(s, g, prec, "n"))
    return tuple(cs), tuple(ss), prec


def _exact(v) -> int | Fraction:
    """A position as an exact number: an int when it is one, else the float's (or Fraction's) exact value."""
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else v
    f = Fraction(v)
    return int(f) if f.denominator == 1 else f


def _position(expect: Expect, position):
    """A row's position as the cache keys it: an exact number, or a multi-axis RoPE's tuple of each axis's exact
    coordinate, (p + axes_offset) x axes_scale, formed without rounding. Positions may be real numbers (the
    properties ask the reference at p + 2 o, and a 1-D RoPE of one axis's coordinates)."""
    if expect.multi_axis:
        v = np.reshape(np.asarray(position, dtype=object), -1)
        v = v if v.size > 1 or expect.n_axes == 1 else np.repeat(v, expect.n_axes)
        offsets = expect.axes_offset or (0,) * expect.n_axes
        scales = expect.axes_scale or (1,) * expect.n_axes
        return tuple(_exact((_exact(p) + _exact(o)) * _exact(s)) for p, o, s in zip(v, offsets, scales))
    return _exact(position)


def cos_sin(expect: Expect, position, seq_len: int | None = None) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """g cos(p theta'_i) and g sin(p theta'_i) for every pair (g the attention factor), as mpmath numbers (``position``
    a multi-axis RoPE's vector: each pair's p is its own axis's)."""
    cs, ss, _ = _cos_sin_raw(_freq_key(expect, seq_len), _position(expect, position))
    return [mpmath.mpf(c) for c in cs], [mpmath.mpf(s) for s in ss]


def cache_clear() -> None:
    """Forget memoised tables (for benchmarks that measure cold cost)."""
    _thetas_raw.cache_clear()
    _attention_factor_raw.cache_clear()
    _cos_sin_raw.cache_clear()


def apply(expect: Expect, x: np.ndarray, positions: np.ndarray, *, dtype: str = "float64") -> np.ndarray:
    """The exact RoPE of rows ``x`` (n, head_dim) at ``positions`` (n,), rounded to float64; a multi-axis RoPE's
    positions are (n, A) vectors (or (n,): text tokens, every axis at p).

    Dims at and beyond ``rotary_dim`` are copied unchanged. ``x`` is read as exact float64 values.
    One call is one sequence: a type whose table depends on the length (dynamic, longrope) uses
    seq_len = max(positions) + 1, as transformers does. ``dtype`` rounds the exact values once,
    correctly, to float32, float16 or bfloat16 instead (returned as float64; normal range assumed).
    """
    x = np.asarray(x, dtype=np.float64)
    positions = np.asarray(positions)
    n = x.shape[0] if x.ndim == 2 else -1
    if x.ndim != 2 or x.shape[1] != expect.head_dim or not expect.accepts_positions(positions.shape, n):
        what = "(n, A)" if expect.multi_axis else "(n,)"
        raise ValueError(f"x must be (n, {expect.head_dim}) and positions {what}, got {x.shape} and {positions.shape}")
    key = _freq_key(expect, seq_len_of(positions))
    out = x.copy()
    pairs = list(zip(expect.pairs(), expect.out_pairs()))  # in place but for rope_interleave
    from_float, mul, sub, add, to_float = libmp.from_float, libmp.mpf_mul, libmp.mpf_sub, libmp.mpf_add, libmp.to_float
    bits = MANTISSA_BITS[dtype]
    if dtype != "float64":
        out = round_to(x, dtype)
    for row, pos in enumerate(positions.tolist()):
        cs, ss, prec = _cos_sin_raw(key, _position(expect, pos))
        xr = x[row].tolist()
        for ((a, b), (oa, ob)), c, s in zip(pairs, cs, ss):
            xa, xb = from_float(xr[a]), from_float(xr[b])
            ya = sub(mul(xa, c, prec), mul(xb, s, prec), prec, "n")
            yb = add(mul(xa, s, prec), mul(xb, c, prec), prec, "n")
            if bits != 53:
                ya, yb = libmp.mpf_pos(ya, bits, "n"), libmp.mpf_pos(yb, bits, "n")
            out[row, oa] = to_float(ya, rnd="n")
            out[row, ob] = to_float(yb, rnd="n")
    return out
