"""Spec section "learned": a learned table of max_len = max_position rows."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure, Fault
from ropespec.properties.cases import TILE_LENGTHS, expect_strategy, listed, long_positions, pinned_expects, rows_pinned
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import positions


def _table_expect(draw, impl):
    """The implementation's expectation, or a drawn one with max_len (max_position) up to 4096 and d up to 64."""
    e = draw(expect_strategy(impl, partial=False), label="expect")
    if impl.expect is None:
        e = e.replace(max_position=draw(st.integers(2, 4096), label="max_len"), head_dim=min(e.head_dim, 64))
    return e


def _cases(impl):
    @st.composite
    def build(draw):
        e = _table_expect(draw, impl)
        n = draw(st.integers(1, 8), label="n")
        pos = draw(st.lists(positions(max_value=e.max_position), min_size=n, max_size=n), label="positions")
        return {"expect": e, "positions": np.array(pos, dtype=np.int64)}

    return build()


@rope_property("learned.in-range",
               rule=("exact: finite rows"),
               cases=_cases,
               pinned=lambda impl: rows_pinned(impl, partial=False, with_x=False) + [
                   {"expect": e, "positions": long_positions(e, TILE_LENGTHS[-1])}
                   for e in pinned_expects(impl, partial=False)[-1:]])
def test_in_range(bind, case):
    e, pos = case["expect"], case["positions"]
    rows = bind(e).lookup(pos)
    if not np.isfinite(rows).all():
        raise Failure(f"table(positions={listed(pos)}) has non-finite rows (max_len {e.max_position})", "non-finite")
    again = bind(e).lookup(pos)
    if not np.array_equal(rows, again):
        raise Failure(f"table(positions={listed(pos)}) answers differently twice", "nondeterministic")
    return 0.0


def _beyond_cases(impl):
    @st.composite
    def build(draw):
        e = _table_expect(draw, impl)
        beyond = draw(st.one_of(st.just(e.max_position), st.integers(e.max_position, 4 * e.max_position + 64)), label="beyond")
        return {"expect": e, "beyond": beyond}

    return build()


@rope_property("learned.out-of-range-raises",
               rule=("exact: an exception, not a value"),
               cases=_beyond_cases,
               pinned=lambda impl: [{"expect": e, "beyond": e.max_position} for e in pinned_expects(impl, partial=False)])
def test_out_of_range_raises(bind, case):
    e, p = case["expect"], case["beyond"]
    try:
        rows = bind(e).lookup(np.array([0, p], dtype=np.int64))
    except Fault as err:
        if err.diagnosis == "exception":
            return 0.0  # it raised: as it should
        raise
    wrapped = bind(e).lookup(np.array([p % e.max_position, min(p, e.max_position - 1)], dtype=np.int64))
    how = ("wraps around (row p mod max_len)" if np.array_equal(rows[1], wrapped[0]) else
           "clamps to the last row" if np.array_equal(rows[1], wrapped[1]) else "reads something")
    raise Failure(f"table(position {p}) answered, but max_len is {e.max_position}: it {how} instead of raising",
                  "position-offset" if "wraps" in how or "clamps" in how else "unknown")


def _count_cases(impl):
    @st.composite
    def build(draw):
        return {"expect": _table_expect(draw, impl)}

    return build()


@rope_property("learned.parameter-count",
               rule=("exact: the count"),
               cases=_count_cases,
               pinned=lambda impl: [{"expect": e} for e in ([impl.expect] if impl.expect is not None else [
                   e.replace(max_position=1024, head_dim=768) for e in pinned_expects(impl, partial=False)[:1]])])
def test_parameter_count(bind, case):
    """Drawn tables as the other learned properties draw them (max_len <= 4096, d <= 64: a table of 131072
    rows of 256 values is 268 MB, allocated again for every example), and GPT-2's 1024 x 768 pinned."""
    e = case["expect"]
    count = bind(e).parameters()
    if count is None:
        raise NotImplementedError("the table exposes neither num_parameters nor weight")
    want = e.max_position * e.head_dim
    if count != want:
        raise Failure(f"the table holds {count} parameters, but max_len x d = {e.max_position} x {e.head_dim} = {want}",
                      "shape")
    return 0.0
