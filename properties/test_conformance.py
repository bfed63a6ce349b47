"""Spec section "conformance": the implementation against the exact reference (ropespec.properties.framework.exact)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure
from ropespec.properties import diagnose, precision
from ropespec.properties.assertions import assert_close
from ropespec.properties.strategies import make_vectors, vectors
from ropespec.properties.numerics import exact, output_bound
from ropespec.properties.cases import (TILE_LENGTHS, expect_strategy, listed, long_expects, long_positions, pinned_expects,
                              rows_cases, rows_pinned, tile_evidence)
from ropespec.properties.framework import rope_property
from ropespec.spec import tolerance






@rope_property("rope.conformance",
               rule=("component_bound: atol + ||x_pair|| (K_ROT u_out + 2 u_A + min(2, |dphi|)), |dphi| from the "
                      "angle and frequency dtypes of the class at that position (the module's error model)"),
               cases=rows_cases, pinned=rows_pinned)
def test_conformance(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    y = bind(e)(x, pos)
    ref, own = exact(e, x, pos)  # ropespec.reference.fast where its error is 1/100 of the bound, the bound carrying it
    bound = output_bound(e, x, pos) + own
    return assert_close(
        "f(x, p)", y, ref, bound, call=f"f(x, positions={pos.tolist()}); {tolerance.class_name(e)}", dtype=e.dtype
    )


def _long_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        n = draw(st.sampled_from(TILE_LENGTHS[:-1]), label="n")  # the longest is pinned: once is what it costs
        start = draw(st.integers(0, e.max_position - 1), label="start")
        return {"expect": e, "positions": long_positions(e, n, start), "x": draw(vectors(e, n), label="x")}

    return build()


def _long_pinned(impl):
    return [{"expect": e, "positions": long_positions(e, n), "x": make_vectors(e, n, seed=n)}
            for e in long_expects(impl) for n in TILE_LENGTHS]


@rope_property("rope.conformance", cases=_long_cases, pinned=_long_pinned, max_examples=2)
def test_long_calls(bind, case):
    """Conformance of calls as long as a prefill's, across the tile sizes kernels use (TILE_LENGTHS)."""
    e, x, pos = case["expect"], case["x"], case["positions"]
    f = bind(e)
    y = f(x, pos)
    ref, own = exact(e, x, pos, fast=True)
    bound = output_bound(e, x, pos) + own
    call = f"f(x, positions) of {len(pos)} rows, positions {listed(pos)}; {tolerance.class_name(e)}"
    try:
        return assert_close("f(x, p)", y, ref, bound, call=call, dtype=e.dtype)
    except Failure as err:
        found = _tile_boundary(f, e, x, pos, y, ref, bound)
        if found is None:
            raise
        raise err.named("tile-boundary", found) from None


def _tile_boundary(f, e, x, pos, y, ref, bound) -> str | None:
    """tile_evidence of a long call f(x, positions): each wrong row called alone. A call whose every row is rotated
    by the first row's position is not a tile's fault but positions read from the wrong place (a packed layout that
    ignores its sequences' offsets): that is left to the diagnosis, which names it."""
    first = np.broadcast_to(pos[:1], pos.shape)
    ref0, own0 = exact(e, x, first, fast=True)
    if np.all(np.abs(y - ref0) <= output_bound(e, x, first) + own0):
        return None
    bad = np.flatnonzero((~(np.abs(y - ref) <= bound)).any(axis=1))
    return tile_evidence(bad, lambda i: bool(np.all(np.abs(f(x[i:i + 1], pos[i:i + 1]) - ref[i]) <= bound[i])))


def _sweep_cases(impl):
    return st.fixed_dictionaries({"expect": expect_strategy(impl), "seed": st.integers(0, 2**16)})


def _sweep_pinned(impl):
    return [{"expect": e, "seed": 0} for e in pinned_expects(impl)[:1]]


@rope_property("rope.conformance", cases=_sweep_cases, pinned=_sweep_pinned, max_examples=4)
def test_large_positions(bind, case):
    """Conformance swept over odd positions log-spaced up to max_position, against every class."""
    e = case["expect"]
    sw = precision.measure(bind(e), e, precision.sweep_positions(e.max_position, per_octave=2), vectors=2,
                           seed=case["seed"])
    declared = precision.class_of(e)
    strict = f"strict {e.dtype} {precision.holds(sw.safe_position('exact'), past=True)}"
    if sw.nonfinite.any():
        raise Failure(f"{_nonfinite(bind(e), e, sw)} [{len(sw.positions)} odd positions up to {e.max_position - 1}, "
                      f"{precision.SWEEP_CHUNK} per call]", "non-finite")
    fail_at = sw.first_failure(declared)
    if fail_at is None:
        until = sw.promises_until(declared)
        reach = (f"holds to p = {sw.positions[-1]}" if until is None else
                 f"holds to p = {until}, and promises nothing beyond (its bound reaches twice the pair norm)")
        return float(np.max(sw.ratio[declared])), f"{tolerance.class_name(e)} {reach}; {strict}"
    i = int(np.flatnonzero(sw.positions == fail_at)[0])
    evidence, diagnosis = None, None
    # a wrong frequency (another base, a scaling method, a wrapping table) grows the error like p as a rounded
    # angle does: the frequencies are read first, and rounding is said only where they are the expected ones
    found = diagnose.frequency_fault(bind(e), e)
    if found is None:
        failing = sw.positions[sw.ratio[declared] > 1.0][:4]
        explained = precision.explain_low_precision(bind(e), e, failing, seed=case["seed"])
        found = ("angle-precision", explained) if explained else diagnose.precision_evidence(sw, e)
    if found is not None:
        diagnosis, evidence = found
    against = (f"noise where the class promises nothing (its bound reaches twice the pair norm past "
               f"{precision.describe_position(sw.promises_until(declared))})" if sw.is_noise(declared, fail_at) else
               precision.times(sw.ratio[declared][i]))
    raise Failure(
        f"error {sw.max_error[i]:.3g} x ||x_pair|| at p = {fail_at}, {against} "
        f"({tolerance.class_name(e)}); the class {precision.holds(sw.safe_position(declared))}; {strict} "
        f"[{len(sw.positions)} odd positions up to {e.max_position - 1}]",
        diagnosis,
        float(sw.ratio[declared][i]),
        evidence=evidence,
    )


def _nonfinite(f, e, sw) -> str:
    """The sweep's non-finite positions, told apart: each is called again in a call of the sweep's size and alone."""
    bad = sw.positions[sw.nonfinite]
    first = int(bad[0])
    i = int(np.flatnonzero(sw.positions == first)[0]) // precision.SWEEP_CHUNK * precision.SWEEP_CHUNK
    chunk = sw.positions[i : i + precision.SWEEP_CHUNK]
    x = make_vectors(e, len(chunk))
    y = f(x, chunk)
    if np.isfinite(y).all():  # it depends on the vectors: say where the sweep saw it
        return f"f(x, p) is non-finite at p = {', '.join(str(p) for p in bad[:6].tolist())}"
    return diagnose.nonfinite_evidence(f, x, chunk, y)
