"""Spec section "contract": the input is left alone, results are repeatable, well-formed and finite."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_equal
from ropespec.properties.cases import expect_strategy, pinned_expects, rows_cases, rows_pinned
from ropespec.properties.strategies import make_vectors
from ropespec.spec.expectation import Expect
from ropespec.spec.scaling import original_length
from ropespec.spec.tables import table_variant
from ropespec.properties.framework import rope_property






@rope_property("contract.input-unmodified",
               rule=("exact: the input array compared bit for bit before and after"),
               cases=rows_cases, pinned=rows_pinned)
def test_input_unmodified(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    call = bind(e).call(x, pos)
    if call.input_mutated:
        raise Failure(
            f"{call.input_mutated} after the call differs from {call.input_mutated} before it: the implementation "
            f"wrote into its argument [f(x, positions={pos.tolist()})]{_when_mutated(bind(e), e)}",
            "input-mutated",
        )
    return 0.0


def _when_mutated(f, e: Expect) -> str:
    """Which call sizes wrote into their argument, where only some did (code that writes in place when a view of its
    input happens to be contiguous): '; it wrote into x in calls of 1 and 2 rows, not of 5 and 64'; '' otherwise."""
    wrote, kept = [], []
    for n in (1, 2, 5, 64):
        call = f.call(make_vectors(e, n, seed=n), e.rows_at(list(range(1, n + 1))) % e.max_position)  # not 0
        (wrote if call.input_mutated else kept).append(str(n))
    if not wrote or not kept:
        return ""
    return f"; it wrote into x in calls of {' and '.join(wrote)} rows, not of {' and '.join(kept)}"


@rope_property("contract.deterministic",
               rule=("exact: two calls compared bit for bit"),
               cases=rows_cases, pinned=rows_pinned)
def test_deterministic(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    f = bind(e)
    first, second = f(x, pos), f(x, pos)
    return assert_equal("second f(x, p)", second, first, call=f"f(x, positions={pos.tolist()}) called twice",
                        diagnosis="nondeterministic")


def _history_pinned(impl):
    """The pinned expectations, and for a factory a length-dependent one of each scaling method whose table changes
    with the length (ropespec.spec.tables.table_variant): there a cache grown by a long call matters."""
    out = [{"expect": e, "seed": 0} for e in pinned_expects(impl)]
    if impl.expect is None:
        base = Expect(head_dim=16, dtype=impl.dtype, max_position=min(impl.max_position, 16384), **impl.promise)
        for scaling in ({"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048},
                        {"rope_type": "longrope", "factor": 4.0, "original_max_position_embeddings": 2048,
                         "short_factor": [1.0 + i / 16 for i in range(8)], "long_factor": [1.0 + i for i in range(8)]}):
            out.append({"expect": base.replace(rope_scaling=scaling), "seed": 0})
    return out


def history_lengths(e: Expect) -> tuple[list[int], int]:
    """(the short calls' lengths, the long call's) of the history probe: for a table that changes with the length,
    one length at or below the original and one between it and the long call; else a prefill's length."""
    top = e.max_position
    L = original_length(e)
    if table_variant(e, top) == table_variant(e, max(1, L // 2)) or L >= top - 1:
        return [min(129, top - 1)], top
    return sorted({max(1, L // 2), min(L + (top - L) // 2, top - 1)}), top


@rope_property("contract.deterministic",
               cases=lambda impl: st.fixed_dictionaries({"expect": expect_strategy(impl),
                                                         "seed": st.integers(0, 2**16)}),
               pinned=_history_pinned, max_examples=2)
def test_history(bind, case):
    """History probed on purpose: short calls on a fresh instance, then each again right after a long call. A stateful
    implementation that keeps what a longer call grew (transformers' dynamic RoPE keeps the larger table for lengths
    between the original and the cached one) answers them otherwise, in every run, not only when a draw happens to
    make a long call first."""
    e = case["expect"]
    shorts, long = history_lengths(e)
    x = make_vectors(e, 3, seed=case["seed"])
    f = bind.restart(e)
    at = lambda n: e.rows_at([0, 1, n - 1])  # noqa: E731 - a call of length n: its largest position n - 1
    before = [f(x, at(n)) for n in shorts]
    for n, first in zip(shorts, before):
        f(x, at(long))  # right before each short call: nothing in between resets what it grew
        again = f(x, at(n))
        if not np.array_equal(again, first, equal_nan=True):
            diff = np.abs(again - first)
            raise Failure(f"f(x, positions {at(n).tolist()}) of a fresh instance and the same call after one of length "
                          f"{long} differ ({int(np.sum(~(again == first)))} of {again.size} values, by up to "
                          f"{float(np.nanmax(diff)):.3g}): it keeps state from earlier calls (a table a longer call "
                          f"grew, kept for length {n})", "nondeterministic")
    return 0.0


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
