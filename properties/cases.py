"""The cases properties draw: the implementation's expectation (fixed, or drawn in the precision class a factory
promises), the pinned expectations and positions every property tries first, and the rows of one call."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from implementations.implementation import Implementation
from properties.strategies import expectations, make_vectors, positions, vectors
from spec.expectation import Expect


def promised(impl: Implementation, drawn: st.SearchStrategy[Expect]) -> st.SearchStrategy[Expect]:
    """Drawn expectations in the precision class a factory promises (``make.promise``, e.g. the shipped
    numpy and torch factories promise the strict class): shipped code is held to its own promise."""
    if not impl.promise:
        return drawn
    return drawn.map(lambda e: e.replace(**impl.promise))


def expect_strategy(impl: Implementation, *, partial: bool | None = None) -> st.SearchStrategy[Expect]:
    """The implementation's fixed expectation, or drawn ones for a factory without one."""
    if impl.expect is not None:
        return st.just(impl.expect)
    return promised(impl, expectations(dtype=impl.dtype, max_position=impl.max_position, partial=partial))


def pinned_expects(impl: Implementation, *, partial: bool | None = None) -> list[Expect]:
    """Expectations every property tries first: the fixed one, or d = 2 (and a partial one)."""
    if impl.expect is not None:
        return [impl.expect]
    base = Expect(dtype=impl.dtype, max_position=impl.max_position, **impl.promise)
    if partial:
        return [base.replace(head_dim=8, rotary_dim=4)]
    return [base.replace(head_dim=2), base.replace(head_dim=64, convention="interleaved")]


def pinned_positions(impl: Implementation) -> list[int]:
    """p = 0, p = 1 and p = max_position - 1."""
    return [0, 1, impl.max_position - 1]


def rows_cases(impl: Implementation, *, partial: bool | None = None, with_x: bool = True) -> st.SearchStrategy[dict]:
    """Cases of one call: an expectation, 1 to 8 positions and (``with_x``) as many rows x."""

    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=partial), label="expect")
        n = draw(st.integers(1, 8), label="n")
        pos = draw(st.lists(positions(max_value=e.max_position), min_size=n, max_size=n), label="positions")
        case = {"expect": e, "positions": np.array(pos, dtype=np.int64)}
        if with_x:
            case["x"] = draw(vectors(e, n), label="x")
        return case

    return build()


def rows_pinned(impl: Implementation, *, partial: bool | None = None, with_x: bool = True) -> list[dict]:
    """The pinned cases of :func:`rows_cases`: positions 0, 1 and max_position - 1."""
    pos = np.array(pinned_positions(impl), dtype=np.int64)
    out = []
    for e in pinned_expects(impl, partial=partial):
        case = {"expect": e, "positions": pos}
        if with_x:
            case["x"] = make_vectors(e, len(pos))
        out.append(case)
    return out
