"""Spec section "conformance": the implementation against the exact mpmath reference."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import reference
from properties.assertions import assert_close
from properties.framework import expect_strategy, pair_norms, per_dim, pinned_expects, pinned_positions, rope_property
from properties.strategies import make_vectors, positions, vectors
from spec import tolerance


def _cases(subject):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(subject), label="expect")
        n = draw(st.integers(1, 8), label="n")
        pos = draw(st.lists(positions(max_value=e.max_position), min_size=n, max_size=n), label="positions")
        return {"expect": e, "positions": np.array(pos, dtype=np.int64), "x": draw(vectors(e, n), label="x")}

    return build()


def _pinned(subject):
    out = []
    for e in pinned_expects(subject):
        pos = np.array(pinned_positions(subject), dtype=np.int64)
        out.append({"expect": e, "positions": pos, "x": make_vectors(e, len(pos))})
    return out


@rope_property("rope.conformance", cases=_cases, pinned=_pinned)
def test_conformance(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    y = bind(e)(x, pos)
    ref = reference.apply(e, x, pos)
    bound = per_dim(e, tolerance.component_bound(e, pos, reference.thetas(e), pair_norms(e, x)))
    return assert_close(
        "f(x, p)", y, ref, bound, call=f"f(x, positions={pos.tolist()}); {tolerance.class_name(e)}", dtype=e.dtype
    )
