"""Spec section "contract": the input is left alone, results are repeatable, well-formed and finite."""

from __future__ import annotations

import numpy as np

from implementations.contract import Failure
from properties.assertions import assert_equal
from properties.cases import rows_cases, rows_pinned
from properties.framework import rope_property






@rope_property("contract.input-unmodified",
               rule=("exact: the input array compared bit for bit before and after"),
               cases=rows_cases, pinned=rows_pinned)
def test_input_unmodified(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    call = bind(e).call(x, pos)
    if call.input_mutated:
        raise Failure(
            f"{call.input_mutated} after the call differs from {call.input_mutated} before it: the implementation "
            f"wrote into its argument [f(x, positions={pos.tolist()})]",
            "input-mutated",
        )
    return 0.0


@rope_property("contract.deterministic",
               rule=("exact: two calls compared bit for bit"),
               cases=rows_cases, pinned=rows_pinned)
def test_deterministic(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    f = bind(e)
    first, second = f(x, pos), f(x, pos)
    return assert_equal("second f(x, p)", second, first, call=f"f(x, positions={pos.tolist()}) called twice",
                        diagnosis="nondeterministic")


@rope_property("contract.shape-finite",
               rule=("exact: kind, shape and dtype equal; every value finite"),
               cases=rows_cases, pinned=rows_pinned)
def test_shape_finite(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    call = bind(e).call(x, pos)  # a wrong kind of array or shape raises Fault("shape") here
    if call.out_dtype != e.dtype:
        raise Failure(f"dtype={call.out_dtype}, but should be {e.dtype} [f(x, positions={pos.tolist()})]", "shape")
    finite = np.isfinite(call.out)
    if not finite.all():
        row, dim = np.argwhere(~finite)[0]
        raise Failure(
            f"f(x, p)[row {row}, dim {dim}]={call.out[row, dim]}, but should be finite: "
            f"{int((~finite).sum())} of {finite.size} values non-finite, first at position {pos[row]} "
            f"[f(x, positions={pos.tolist()})]",
            "non-finite",
        )
    return 0.0
