"""Hypothesis strategies for RoPE inputs: head dims, bases, positions, expectations, vectors.

Following Hypothesis' style: keyword-only bounds, even numbers by ``map`` rather than ``filter``,
generation kept local so shrinking works.

Vectors are drawn as (seed, scale, distribution) and expanded with numpy's generator: drawing every element
through Hypothesis would cost far more than the property itself at head_dim 256. A counterexample
therefore shrinks in rows, dims, positions, scale and distribution, and prints the vector's values.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

from ropespec.spec import methods
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import CONVENTIONS, Expect


@lru_cache(maxsize=None)  # a strategy object reused: Hypothesis validates it once, not per draw
def head_dims(*, min_value: int = 2, max_value: int = 256) -> st.SearchStrategy[int]:
    """Even head dims in [min_value, max_value]."""
    return st.integers(-(-min_value // 2), max_value // 2).map(lambda h: 2 * h)


@lru_cache(maxsize=None)  # a strategy object reused: Hypothesis validates it once, not per draw
def bases(*, min_value: float = 2.0, max_value: float = 1e7) -> st.SearchStrategy[float]:
    """RoPE bases, log-uniform in [min_value, max_value], plus the common ones."""
    lo, hi = math.log(min_value), math.log(max_value)
    common = st.sampled_from([10000.0, 500000.0, 1000000.0, 150000.0])
    return st.one_of(common, st.floats(lo, hi).map(lambda t: float(min(max_value, max(min_value, math.exp(t))))))


def boundary_positions(max_value: int) -> list[int]:
    """0, 1, 2, 2**k - 1, 2**k and max_value - 1: where tables and integer formats end."""
    out = {0, 1, 2, max_value - 1}
    for k in range(1, max_value.bit_length() + 1):
        out.update({2**k - 1, 2**k, 2**k + 1})
    return sorted(p for p in out if 0 <= p < max_value)


@lru_cache(maxsize=None)  # a strategy object reused: Hypothesis validates it once, not per draw
def positions(*, min_value: int = 0, max_value: int) -> st.SearchStrategy[int]:
    """Positions in [min_value, max_value), weighted toward boundaries and large odd values
    (powers of two hide float32 product error: p * theta is exact when p is one)."""
    lo, hi = min_value, max_value - 1
    top = math.log2(hi + 1)
    return st.one_of(
        st.sampled_from([p for p in boundary_positions(max_value) if p >= lo] or [lo]),
        st.integers(lo, hi),
        st.integers((lo + 1) // 2, (hi - 1) // 2).map(lambda k: 2 * k + 1) if hi > lo else st.just(lo),
        st.floats(0, top).map(lambda e: min(hi, max(lo, int(2**e)))),
    )


@st.composite
def _expectations(draw, dtype, max_position, conventions, partial, max_head_dim):
    min_hd = 4 if partial else 2
    hd = draw(head_dims(min_value=min_hd, max_value=max_head_dim), label="head_dim")
    if partial is False:
        rd = hd
    elif partial:
        rd = draw(head_dims(min_value=2, max_value=hd - 2), label="rotary_dim")
    else:
        rd = draw(st.one_of(st.just(hd), head_dims(min_value=2, max_value=hd)), label="rotary_dim")
    return Expect(
        head_dim=hd,
        rotary_dim=rd,
        rope_theta=draw(bases(), label="rope_theta"),
        convention=draw(st.sampled_from(conventions), label="convention"),
        dtype=dtype,
        max_position=max_position,
    )


def expectations(
    *,
    dtype: str = "float32",
    max_position: int = 131072,
    conventions: tuple[str, ...] = CONVENTIONS,
    partial: bool | None = None,
    max_head_dim: int = 256,
) -> st.SearchStrategy[Expect]:
    """Expectations of default RoPE. ``partial``: True forces rotary_dim < head_dim, False forces
    full rotary, None draws both. (The composites here are decorated once, at import: Hypothesis reads
    a composite's source each time ``st.composite`` is applied, which drawing per case paid for.)"""
    return _expectations(dtype, max_position, tuple(conventions), partial, max_head_dim)


@st.composite
def _axes_expectations(draw, dtype, max_position, kinds, conventions):
    kind = draw(st.sampled_from(kinds), label="axes")
    fields: dict = {}
    if kind == "parity":
        k = 2 * draw(st.integers(1, 16), label="pairs per axis")
        fields["axes_parity"] = True
    else:
        A = draw(st.integers(1, 4), label="axes")
        sizes = draw(st.lists(st.integers(1, 16), min_size=A, max_size=A), label="sizes")
        if kind == "interleaved" and A > 1:  # axis a > 0 owns pairs a, a + A, ..., a + A (s_a - 1): all below the pairs
            rest = sum(sizes[1:])
            sizes[0] = max(sizes[0], max(a + A * (s - 1) + 1 for a, s in enumerate(sizes[1:], start=1)) - rest)
        if kind == "per-axis":
            fields["axes_dims_rope"] = [2 * v for v in sizes]
        else:
            fields["mrope_section"] = sizes
            fields["mrope_interleaved"] = kind == "interleaved"
        k = sum(sizes)
    extra = draw(st.sampled_from((0, 0, 0, 2, 8)), label="pass-through dims")  # GLM-4.1V rotates half its dims
    return Expect(
        head_dim=2 * k + extra,
        rotary_dim=2 * k,
        rope_theta=draw(bases(), label="rope_theta"),
        convention=draw(st.sampled_from(conventions), label="convention"),
        dtype=dtype,
        max_position=max_position,
        **fields,
    )


def axes_expectations(*, kinds: tuple[str, ...], dtype: str = "float32", max_position: int = 131072,
                      conventions: tuple[str, ...] = CONVENTIONS) -> st.SearchStrategy[Expect]:
    """Multi-axis expectations of the given kinds (ropespec.spec.expectation.AXES_KINDS): 1 to 4 axes of unequal sections
    (1 to 16 pairs each), some with pass-through dims."""
    return _axes_expectations(dtype, max_position, tuple(kinds), tuple(conventions))


def position_vectors(expect: Expect, *, max_value: int, min_value: int = 0) -> st.SearchStrategy:
    """One position of ``expect``: an int for 1-D RoPE, an int64 vector of A entries for multi-axis RoPE, its axes
    distinct whenever the range allows (a token at one position on every axis hides which axis a pair reads)."""
    one = positions(min_value=min_value, max_value=max_value)
    if not expect.multi_axis:
        return one
    A = expect.n_axes
    unique = A > 1 and max_value - min_value >= A
    return st.lists(one, min_size=A, max_size=A, unique=unique).map(lambda v: np.array(v, dtype=np.int64))


def position_rows(expect: Expect, n: int, *, max_value: int, min_value: int = 0) -> st.SearchStrategy[np.ndarray]:
    """Positions of n rows of ``expect``: int64 of shape (n,), or (n, A) for a multi-axis RoPE (each row's axes
    distinct, :func:`position_vectors`)."""
    one = position_vectors(expect, max_value=max_value, min_value=min_value)
    return st.lists(one, min_size=n, max_size=n).map(
        lambda rows: np.array(rows, dtype=np.int64).reshape(expect.position_shape(n)))


def pinned_rows(expect: Expect, values: list[int]) -> np.ndarray:
    """Rows at the given positions, every axis at every value in turn (:meth:`Expect.rows_at`)."""
    return expect.rows_at(values)


KINDS = ("normal", "uniform", "basis", "small-integers")


_SEEDS, _LOG2_SCALES, _DISTRIBUTIONS = st.integers(0, 2**32 - 1), st.integers(-8, 8), st.sampled_from(KINDS)


@st.composite
def _vectors(draw, expect, n):
    seed = draw(_SEEDS, label="seed")
    scale = 2.0 ** draw(_LOG2_SCALES, label="log2 scale")
    distribution = draw(_DISTRIBUTIONS, label="distribution")
    return make_vectors(expect, n, seed=seed, scale=scale, distribution=distribution)


def vectors(expect: Expect, n: int) -> st.SearchStrategy[np.ndarray]:
    """(n, head_dim) float64 arrays whose values are exactly representable in ``expect.dtype``,
    at scales 2**-8 ... 2**8."""
    return _vectors(expect, n)


def make_vectors(expect: Expect, n: int, *, seed: int = 0, scale: float = 1.0, distribution: str = "normal") -> np.ndarray:
    """The (n, head_dim) array that :func:`vectors` draws for (seed, scale, distribution)."""
    rng = np.random.default_rng(seed)
    d = expect.head_dim
    if distribution == "normal":
        x = rng.standard_normal((n, d))
    elif distribution == "uniform":
        x = rng.uniform(-1, 1, (n, d))
    elif distribution == "basis":
        x = np.zeros((n, d))
        x[np.arange(n), rng.integers(0, d, n)] = 1.0
    elif distribution == "small-integers":
        x = rng.integers(-3, 4, (n, d)).astype(np.float64)
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    return round_to(x * scale, expect.dtype)


LENGTHS = (256, 1024, 4096)
FACTORS = (2.0, 4.0, 8.0, 16.0, 40.0)


def scaled_expectations(*, rope_types: tuple[str, ...], dtype: str = "float32") -> st.SearchStrategy[Expect]:
    """Expectations with a scaling method among ``rope_types``, HF's keys, factors 2 to 40, original
    lengths 256 to 4096 and max_position 8 times the original length."""

    @st.composite
    def build(draw):
        rt = draw(st.sampled_from(rope_types), label="rope_type")
        hd = draw(head_dims(min_value=8, max_value=128), label="head_dim")
        L = draw(st.sampled_from(LENGTHS), label="original length")
        s = draw(st.sampled_from(FACTORS), label="factor")

        def pick(label, options, n=None):  # (None, ...): maybe absent; (False, True): a boolean; n: n floats
            if n is not None:
                return draw(st.lists(st.floats(*options), min_size=n, max_size=n), label=label)
            if options == (False, True):
                return draw(st.booleans(), label=label)
            if options[0] is None:
                return draw(st.one_of(st.none(), st.sampled_from(options[1:])), label=label)
            return draw(st.sampled_from(options), label=label)

        scaling = methods.get(rt).draw(pick, factor=s, original=L, n_pairs=hd // 2)
        return Expect(
            head_dim=hd,
            rope_theta=draw(bases(min_value=100.0), label="rope_theta"),
            convention=draw(st.sampled_from(CONVENTIONS), label="convention"),
            dtype=dtype,
            max_position=8 * L,
            rope_scaling=scaling,
        )

    return build()
