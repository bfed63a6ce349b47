"""Naming the fault: a diagnosis earned by evidence measured on the implementation.

When a property fails without a diagnosis of its own, :func:`diagnose` probes the implementation
(:mod:`ropespec.properties.probe`) and returns a word of the fixed vocabulary with one sentence of evidence in
numbers, or None when nothing fits (the caller then says ``unknown``). The checks go from the most to
the least structural: an output that does not depend on x alone, the convention, the norms, the direction
and size of the angles, a position offset or wrap, the scaling method, the base.

The checks live by subject: :mod:`.structure` (what the output depends on, the convention, the rotary
dims), :mod:`.frequencies` (the angles' ladder, base, factor and scaling method, measured), :mod:`.axes` (which axis
each pair of a multi-axis RoPE turns with), :mod:`.large_positions` (growth and wrap of the error with the position),
on :mod:`.findings` (a word with its evidence, and what else was found).
"""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.implementations.contract import Fault
from ropespec.properties import precision, probe
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect
from ropespec.properties.diagnose.findings import _close, _measured, _with, also_of
from ropespec.properties.diagnose.structure import STRUCTURAL, _structure_of, nonfinite_evidence, root_cause
from ropespec.properties.diagnose.large_positions import _growth, precision_evidence
from ropespec.properties.diagnose.frequencies import (_frequency_model, _length_fields, curves, dynamic_fit,
                                                      frequencies_off, scaling_variants)
from ropespec.properties.diagnose.axes import axes_fault

__all__ = ["STRUCTURAL", "also_of", "curves", "diagnose", "diagnose_within", "dynamic_fit", "frequencies_off", "frequency_fault",
           "nonfinite_evidence", "precision_evidence", "root_cause", "run_diagnosis", "scaling_variants"]


def diagnose(f, e: Expect, *, reach: int | None = None) -> tuple[str, str] | None:
    """(word, evidence) for an implementation f (float64 in and out) that fails under e, or None.

    The probes call f up to e's max_position; an implementation that cannot be called there (a table that ends,
    raising beyond it) is probed again up to ``reach``, the largest position the failing case used, so that a
    failure inside the range it answers gets the word its evidence there gives."""
    try:
        return run_diagnosis(f, e)
    except Fault:
        return diagnose_within(f, e, reach)
    except (FloatingPointError, ValueError, OverflowError):
        return None


def run_diagnosis(f, e: Expect) -> tuple[str, str] | None:
    """:func:`diagnose` probed to e's max_position, a Fault of f there raised."""
    return (_diagnose_axes if e.multi_axis else _diagnose)(f, e)


def diagnose_within(f, e: Expect, reach: int | None) -> tuple[str, str] | None:
    """The diagnosis probed up to ``reach`` only, for an implementation that cannot be called at e's max_position."""
    if reach is None or reach + 1 >= e.max_position:
        return None
    try:
        return run_diagnosis(f, e.replace(max_position=max(reach + 1, 2)))
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return None


def frequency_fault(f, e: Expect) -> tuple[str, str] | None:
    """(word, evidence) when the frequencies read off f are not e's and a model says what they are: a table that
    wraps, the angle's sign or size, a constant position offset, another base or normalising dim, a mistaken
    scaling method, or every frequency off by one factor. None when they are e's (to the precision they are read
    to) or no model fits: rounding (angle-precision) is only said once this has found nothing, because a wrong
    frequency makes the error grow like p just as a rounded angle does."""
    try:
        if e.multi_axis:
            return axes_fault(f, e) or _frequency_model(probe.text_view(f, e), e, *_measured(probe.text_view(f, e), e))
        fr, th, tol, seq = _measured(f, e)
        return _frequency_model(f, e, fr, th, tol, seq)
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return None


def _diagnose(f, e: Expect) -> tuple[str, str] | None:
    found = _structure_of(f, e)
    if found is None:
        return _measured_fault(f, e)
    measured = _as_measured(f, e) if found[0] in ("convention", "rotary-dim") else None
    if measured is None:
        return found
    try:  # the frequencies read along the pairs it has: a second field where they are not e's either
        return _with(found, _measured_fault(f, measured))
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return found


def _as_measured(f, e: Expect) -> Expect | None:
    """e with the convention and rotary dim f is measured to have (probe.convention), or None where they are no
    convention's: the expectation under which f's frequencies are read once its structure is known."""
    pr = probe.convention(f, e.head_dim)
    r = e.head_dim - len(pr.untouched)
    conv = pr.convention(e.head_dim, r) if r >= 2 and not pr.problem else None
    if conv is None:
        return None
    try:
        return e.replace(convention=conv, rotary_dim=r, partial_rotary_factor=None)
    except ValueError:
        return None


def _diagnose_axes(f, e: Expect) -> tuple[str, str] | None:
    """A multi-axis RoPE: the structure read at text tokens (every axis at p), then which axis each pair turns with
    and at which frequency, then what remains read as 1-D RoPE at text tokens (base, direction, precision)."""
    text = probe.text_view(f, e)
    found = _structure_of(text, e)
    if found is not None and found[0] == "convention":
        measured = _as_measured(text, e)
        if measured is not None:
            try:  # under the convention it has, the axes and frequencies read as for any other
                return _with(found, axes_fault(f, measured) or _measured_fault(text, measured))
            except (Fault, FloatingPointError, ValueError, OverflowError):
                return found
    return found or axes_fault(f, e) or _measured_fault(text, e)


def _measured_fault(f, e: Expect) -> tuple[str, str] | None:
    fr, th, tol, seq = _measured(f, e)
    found = _frequency_model(f, e, fr, th, tol, seq) or _length_fields(f, e)
    if found:  # the attention factor is a field of its own, measured apart (a unit pair's norm): said if it is wrong
        return _with(found, _attention_factor_fault(f, e)) if found[0] not in ("attention-factor", "angle-precision") \
            else found
    d = e.head_dim
    top = e.max_position - 1
    pairs = list(zip(e.pairs(), e.out_pairs()))
    small = [p for p in (1, 3, 5, 33, 257, 999) if p <= top]  # where the candidates differ least among themselves
    if len(small) < 4 and top not in small:  # a short domain (a vision grid's 24 patches): its last position too,
        small.append(top)  # where its rounding is largest and a failure of a short domain shows
    explained = precision.explain_low_precision(f, e, np.array(small, dtype=np.int64))
    if explained:
        return "angle-precision", explained
    norms = np.array([probe.angles(f, d, pairs, p, seq)[1] for p in (1, 5, min(top, 1001))])
    g = reference.attention_factor(e)
    allowed = tolerance.attention_factor_allowance(e, g)
    if norms.max() - norms.min() > 2 * allowed:
        i = np.unravel_index(int(np.argmax(np.abs(norms - np.median(norms)))), norms.shape)
        return "not-a-rotation", (f"a unit pair comes out with norms from {norms.min():.4g} to {norms.max():.4g} "
                                  f"(pair {i[1]}): a rotation keeps them equal")
    found = _attention_factor_fault(f, e)
    if found:
        return found
    if _close(fr.thetas, th, tol):
        return _growth(f, e)
    if e.method.scales:
        ratio = fr.thetas / th
        i = int(np.nanargmax(np.abs(ratio - 1)))
        if abs(ratio[0] - 1) <= tol[0]:
            return "scaling", f"pair {i} turns at {fr.thetas[i]:.6g}, the {e.rope_type} table says {th[i]:.6g}"
    return None


def _attention_factor_fault(f, e: Expect) -> tuple[str, str] | None:
    """("attention-factor", evidence) where a unit pair comes out scaled by another factor than e's, or None."""
    g = reference.attention_factor(e)
    measured = probe.measure(f, e, max_position=2).attention_factor  # as scaling.attention-factor reads it
    if abs(measured - g) > tolerance.attention_factor_allowance(e, g):
        return "attention-factor", (f"every pair comes out {measured:.6g} times its input, expected the attention "
                                    f"factor {g:.6g} ({measured / g:.4g} times it)")
    return None
