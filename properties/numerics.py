"""Numerics the properties share: pair norms, the tolerance model's bound of one call, the exact rotation to compare
an output with (and that reference's own error), the convention's dims moved between input and output, and what the
bias families' diagnoses and fingerprints read alike (a coarse dtype's rounding, the keys of ALiBi's precision
ladder)."""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.spec import tolerance
from ropespec.spec.dtypes import MANTISSA_BITS, round_to
from ropespec.spec.expectation import Expect


def pair_norms(expect: Expect, x: np.ndarray, *, output: bool = False) -> np.ndarray:
    """||(x_a, x_b)|| for every row and pair: shape (n, n_pairs). ``output``: x is an output, whose
    pairs sit where the convention writes them (:meth:`Expect.out_pairs`)."""
    a, b = (np.array(ix) for ix in zip(*(expect.out_pairs() if output else expect.pairs())))
    return np.hypot(x[:, a], x[:, b])


def output_bound(expect: Expect, x: np.ndarray, positions: np.ndarray, *, convention_free: bool = False) -> np.ndarray:
    """Allowed error of each output component of one call f(x, positions): shape (n, head_dim).

    The tolerance model's bound at the call's own frequencies (seq_len = max(positions) + 1 for the
    types that depend on it), scaled by the attention factor. ``convention_free`` bounds each pair norm
    whatever the convention, for properties that must hold for any convention."""
    positions = _positions(positions)
    positions = positions.astype(np.float64) if positions.dtype.kind in "fO" else positions
    g = reference.attention_factor(expect)
    th = reference.thetas(expect, reference.seq_len_of(positions))
    if convention_free:
        norms = np.broadcast_to(tolerance.convention_free_norm(x), (len(x), expect.n_pairs))
    else:
        norms = pair_norms(expect, x)
    return per_dim(expect, tolerance.component_bound(expect, positions, th, g * norms))


def _positions(positions) -> np.ndarray:
    """Positions as the reference takes them: integers as int64; real ones (a property asking at p + 2 o, or a 1-D
    RoPE of an axis's coordinates, exact Fractions) as they are."""
    p = np.asarray(positions)
    if p.dtype == object or (p.dtype.kind == "f" and not np.all(np.mod(p, 1) == 0)):
        return p
    return p.astype(np.int64)


def exact(expect: Expect, x: np.ndarray, positions: np.ndarray, *, fast: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The exact rotation of rows ``x`` to compare an output with, and a bound on that reference's own
    error per component (shape (n, head_dim)): ``ropespec.reference.fast`` (double-double, 2 ulp of the pair
    norm) where ``tolerance.fast_reference_suffices`` or ``fast`` is asked for (a call of thousands of rows), which
    the bound then carries; the mpmath reference, exact to half an ulp of float64, otherwise (0)."""
    positions = _positions(positions)
    if (fast or tolerance.fast_reference_suffices(expect)) and positions.dtype != object:
        g = reference.attention_factor(expect)
        own = per_dim(expect, tolerance.FAST_REFERENCE_ERROR * g * pair_norms(expect, x))
        return reference.fast.apply(expect, x, positions), own
    return reference.apply(expect, x, positions), np.zeros((len(x), expect.head_dim))


def to_output_dims(expect: Expect, x: np.ndarray) -> np.ndarray:
    """x (n, head_dim) with each dim moved to where the convention writes it (a copy)."""
    out = np.empty_like(x)
    out[:, expect.output_dims()] = x
    return out


def to_input_dims(expect: Expect, y: np.ndarray) -> np.ndarray:
    """An output y (n, head_dim) read back into the input layout: the inverse of :func:`to_output_dims`."""
    return np.asarray(y)[:, expect.output_dims()]


def per_dim(expect: Expect, per_pair: np.ndarray, passthrough: np.ndarray | float = 0.0) -> np.ndarray:
    """Spread an (n, n_pairs) array onto (n, head_dim): both dims of a pair get the pair's value;
    pass-through dims (outside the rotated ones) get ``passthrough`` (a scalar or an (n, head_dim) array)."""
    out = np.array(np.broadcast_to(passthrough, (per_pair.shape[0], expect.head_dim)), dtype=np.float64)
    out[:, expect.rotated] = 0.0
    a, b = (np.array(ix) for ix in zip(*expect.out_pairs()))
    out[:, a] = per_pair
    out[:, b] = per_pair
    return out


#: the coarse dtypes a bias, or its slopes, may be seen formed in
COARSE = ("bfloat16", "float16")


def coarse_roundings(got: np.ndarray, rule: np.ndarray) -> list[str]:
    """The coarse dtypes whose rounding of ``rule`` ``got`` is, every value within a sixteenth of that dtype's step
    (|rule| 2^-p / 16, p its significant bits), finest last: both where their values are the same here (2^-0.5
    rounds alike to bfloat16 and float16), since the evidence cannot tell them apart."""
    return [d for d in COARSE
            if np.all(np.abs(got - round_to(rule, d)) <= np.abs(rule) * 2.0 ** -MANTISSA_BITS[d] / 16)]


def alibi_precision_keys(p: int) -> list[int]:
    """The keys a query at ``p`` is checked on at large positions: itself, its near neighbours, 64 and 1000 back, and
    the first key (where a bias formed from absolute positions is furthest from its distance form)."""
    return sorted({max(p - d, 0) for d in (0, 1, 2, 3, 7, 64, 1000)} | {0})
