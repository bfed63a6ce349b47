"""Faults that grow with the position: the error's growth against the precision class, and a position that wraps."""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.properties import precision
from ropespec.properties.numerics import output_bound
from ropespec.spec.expectation import Expect


def _growth(f, e: Expect) -> tuple[str, str] | None:
    """Frequencies are right: is the error a rounding's (angles computed with too little precision)?"""
    if e.max_position <= SHORT:  # a short domain (a vision grid): every position, with more vectors, as a rounding
        # that leaves the bound there does so at a few positions and by little (SAM 3's strict class at p = 15 of 24)
        sw = precision.measure(f, e, np.arange(1, e.max_position, dtype=np.int64), vectors=4)
    else:
        sw = precision.measure(f, e, precision.sweep_positions(e.max_position, per_octave=1), vectors=1)
    return precision_evidence(sw, e)


#: the largest max_position whose every position the growth sweep measures
SHORT = 128


def precision_evidence(sw, e: Expect) -> tuple[str, str] | None:
    """("angle-precision", evidence) from a sweep of an implementation whose frequencies are e's, where the
    declared class fails: the error grows like p from within the bound, or a coarser class (angles and inverse
    frequencies formed in a lower dtype) holds at every swept position where it promises something. None when
    the sweep shows neither."""
    declared = precision.class_of(e)
    fail = sw.first_failure(declared)
    if fail is None:
        return None
    k = sw.growth()
    if k is not None and k >= 0.5 and sw.ratio[declared][0] <= 1.0:
        return "angle-precision", (f"the frequencies are right but the error grows like p^{k:.2f} and leaves the "
                                   f"bound at p = {fail}")
    names = list(precision.CLASSES)
    # the classes of mainstream code only: a bfloat16 or float16 class's bound is wide enough to take in a wrong
    # frequency, and those roundings are recognised by their own signature (explain_low_precision)
    coarser = [c for c in names[names.index(declared) + 1:] if c in ("float64", "float32")] if declared in names else []
    for c in coarser:
        if c in sw.ratio and sw.first_failure(c) is None and sw.informative(c).any():
            until = sw.promises_until(c)
            reach = f"to p = {sw.positions[-1]}" if until is None else f"to p = {until}, where its bound saturates"
            return "angle-precision", (f"the frequencies are right and the error stays within the {c} class's bound "
                                       f"at every swept position ({reach}): angles or inverse frequencies formed in {c}")
    return None


def _wrap(f, e: Expect) -> tuple[str, str] | None:
    """Frequencies are right up to some length; do large positions wrap around a table? f(x, p) is the rotation
    at p mod T where it is within the expectation's own bound at p mod T and outside it at p."""
    top = e.max_position - 1
    x = np.random.default_rng(0).standard_normal((1, e.head_dim))

    def near(y, p):
        return bool(np.all(np.abs(y - reference.apply(e, x, np.array([p]))) <= output_bound(e, x, np.array([p]))))

    for p in sorted({top, top - 1 + top % 2, min(top, (3 * top) // 4 | 1)}):  # odd ones near the end, within it
        y = f(x, np.array([p]))
        if near(y, p):
            continue
        for k in range(4, 40):
            T = 1 << k
            if T >= p:
                break
            if near(y, p % T):
                return "position-offset", f"positions wrap modulo {T}: f(x, {p}) equals the exact rotation at {p % T}"
    return None
