"""Naming a failure from the implementation's measured model.

A failing property names its fault from what it measured, or leaves the word to the diagnosis. Both read one measured
model of the implementation under the expectation (:class:`Model`): its structural root cause, the diagnosis of every
field the probes read (:func:`ropespec.properties.diagnose.diagnose`) and, where no model of a fault fits, the fingerprint
(:mod:`ropespec.properties.fingerprint`): what was measured, said with ``unknown``. The model is computed at the first failure
that asks and kept on the implementation for every failure after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ropespec.implementations.contract import Failure, Fault, Unsupported
from ropespec.properties import fingerprint as fingerprints
from ropespec.properties.fingerprint_text import describe
from ropespec.properties.diagnose import also_of, diagnose_within, frequencies_off, root_cause, run_diagnosis
from ropespec.spec.expectation import Expect


def name_failure(res, impl) -> None:
    """Give a failing Result (ropespec.properties.results.Result) its word: from evidence where the property said none
    (:func:`diagnose`), or the structural root cause where it named one from what it measured (:func:`root_cause`);
    a call that raised where a position offset measured below it reads past the end of its table is that offset."""
    if res.diagnosis is None:
        _name_unnamed(res, impl)
    elif res.diagnosis == "exception":
        _past_its_table(res, impl)
    else:
        _root_cause(res, impl)


def _past_its_table(res, impl) -> None:
    """An exception explained by the positions' offset: where the implementation answers below some position and
    raises from it on, and the model measured below it shifts every position by c > 0, a table of max_position rows
    read at p + c ends exactly there; the offset, measured, is the word of the failure too (one bug, one word)."""
    if not impl.form.diagnosed:
        return
    expect = _expect_of(res, impl)
    if expect is None:
        return
    model = measured_model(impl, expect)
    found = model.within_domain
    if not (model.beyond and model.domain and found and found[0] == "position-offset"):
        return
    shift = re.search(r"shifted by (-?\d+)", found[1])  # the offset as diagnose.frequencies says it
    c = int(shift.group(1)) if shift else 0
    if c > 0 and model.domain == expect.max_position - c:
        res.name("position-offset", f"{found[1]} (measured below p = {model.domain}), so from p = {model.domain} on it "
                                    f"reads past the {expect.max_position} rows of its table, and the call raised",
                 follows=True)


#: words a property gives from what it measured along the expected pairs; a structural fault underneath
#: (another convention or layout, no rotation, NaN) is the root cause and takes their place
_MEASURED = ("scaling", "attention-factor", "direction", "double-rotation", "position-offset", "base", "angle-precision")


def _expect_of(res, impl) -> Expect | None:
    """The expectation a failure is named under. A decoder's is read within the positions its failing case decoded
    to: a generate loop reaches no further, and each probe past them would prefill a prompt that long."""
    expect = impl.expect
    if expect is None and res.counterexample and isinstance(res.counterexample.get("expect"), dict):
        expect = Expect.from_dict(res.counterexample["expect"])
    if expect is not None and impl.mode == "decoder":
        reach = reach_of(res.counterexample)
        if reach is not None and 2 <= reach + 1 < expect.max_position:
            expect = expect.replace(max_position=reach + 1)
    return expect


def _root_cause(res, impl) -> None:
    """One root cause, one word: a failure named from a measurement says "follows from <word>" and takes
    that word when the implementation has a structural fault (ropespec.properties.diagnose.root_cause), or when the one
    measured model of the implementation (:func:`measured_model`) names another field of the expectation: every
    property that measured along the expected pairs then carries the word the measurement gives."""
    if not impl.form.diagnosed or res.diagnosis not in _MEASURED:
        return
    expect = _expect_of(res, impl)
    if expect is None:
        return
    model = measured_model(impl, expect)
    found = model.root or model.finding
    own = res.failure.evidence if res.failure is not None else None
    if found and model.root is None and res.diagnosis in also_of(found):
        return  # the field this property measured is wrong on its own (the model says so too): its word stands
    if found and found[0] != res.diagnosis:
        res.name(found[0], found[1], follows=True, also=also_of(found))
    elif found and found[1] not in (own or ""):  # the same word: the measurement's evidence first, then the property's own
        res.name(found[0], f"{found[1]}; {own}" if own else found[1], also=also_of(found))


@dataclass
class Model:
    """What probing an implementation says of it under one expectation, measured once and kept on the implementation
    (:func:`measured_model`): ``root``, its structural fault (:func:`root_cause`); ``finding``, the diagnosis of
    every field measured (:func:`diagnose`: structure, direction, offset, frequencies and the scaling that fits them,
    attention factor, axes, rounding); ``beyond``: it could not be called at the expectation's max_position, so the
    finding is read within the positions a failure reached (``within``, per reach); ``measured``: where no model of
    a fault fits, what the fingerprint measured, in words (:meth:`what_was_measured`)."""

    root: tuple[str, str] | None
    finding: tuple[str, str] | None
    beyond: bool = False
    within: dict = field(default_factory=dict)
    measured: str | None = None  # None until measured
    #: where it could not be called at max_position: the first position it raises at (it answers below it), and the
    #: diagnosis probed below it
    domain: int | None = None
    within_domain: tuple[str, str] | None = None

    def what_was_measured(self, f, e: Expect) -> str | None:
        """The fingerprint of f under e (the model's expectation) as one sentence, None where f cannot be
        fingerprinted; measured once."""
        if self.measured is None:
            said = []
            for measure in (lambda: frequencies_off(f, e),
                            lambda: "; ".join(describe(fingerprints.fingerprint(f, e)))):
                try:
                    said.append(measure())
                except (Failure, Unsupported, FloatingPointError, ValueError, OverflowError, np.linalg.LinAlgError):
                    pass
            self.measured = "; ".join(filter(None, said))  # "" where nothing could be measured
        return self.measured or None


def measured_model(impl, expect: Expect) -> Model:
    """The measured model of ``impl`` under ``expect``: computed at the first failure that asks, and the first
    evidence of every failure of the implementation after it (each property's own evidence follows it)."""
    cache = impl.__dict__.setdefault("_measured", {})
    if expect not in cache:
        root = finding = None
        beyond = False
        domain = within_domain = f = None
        try:
            f = impl.as_rope(expect)
            root = root_cause(f, expect)
            finding = run_diagnosis(f, expect)
        except Fault:
            beyond = True
            domain = _answers_below(f, expect) if f is not None else None
            if domain is not None and domain > 1:
                within_domain = diagnose_within(f, expect, domain - 1)
        except (Unsupported, Failure, FloatingPointError, ValueError, OverflowError):
            pass
        cache[expect] = Model(root, finding, beyond, domain=domain, within_domain=within_domain)
    return cache[expect]


def _answers_below(f, e: Expect) -> int | None:
    """The first position ``f`` raises at, one row at a time, bisected between 0 (where it answers) and max_position - 1
    (where it raises); None where it raises at 0 or answers at the end (another fault than a domain that ends)."""
    x = np.random.default_rng(0).standard_normal((1, e.head_dim))

    def answers(p: int) -> bool:
        at = np.full((1,) + ((e.n_axes,) if e.multi_axis else ()), p, dtype=np.int64)
        try:
            f(x, at)
            return True
        except (Fault, Unsupported, FloatingPointError, ValueError, OverflowError):
            return False

    lo, hi = 0, e.max_position - 1
    if not answers(lo) or answers(hi):
        return None
    while hi - lo > 1:  # answers at lo, raises at hi
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if answers(mid) else (lo, mid)
    return hi


def _name_unnamed(res, impl) -> None:
    """Name the fault of a failure that came without a diagnosis, from the measured model; ``unknown`` where no model
    of a fault fits, with what was measured as its evidence."""
    if res.diagnosis is not None or not impl.form.diagnosed:
        res.diagnosis = res.diagnosis or "unknown"
        return
    expect = _expect_of(res, impl)
    found = None
    if expect is not None:
        model = measured_model(impl, expect)
        found = model.finding
        if model.beyond:  # probed within what the failing case reached, once per reach
            reach = reach_of(res.counterexample)
            if reach not in model.within:
                try:
                    model.within[reach] = diagnose_within(impl.as_rope(expect), expect, reach)
                except (Unsupported, Failure):
                    model.within[reach] = None
            found = model.within[reach] or model.within_domain
    if found:
        res.name(*found, also=also_of(found))
        return
    measured = None
    if expect is not None and not model.beyond:
        try:
            measured = model.what_was_measured(impl.as_rope(expect), expect)
        except (Unsupported, Failure):
            measured = None
    res.name("unknown", f"no model of a fault fits what was measured: {measured}" if measured else None)


def reach_of(counterexample: dict | None) -> int | None:
    """The largest position a failing case called the implementation at (None: it says no position)."""
    found = []
    for key in ("positions", "offsets", "a", "b", "m", "n", "shift", "position"):
        v = (counterexample or {}).get(key)
        if v is not None:
            found.append(int(np.max(np.abs(np.asarray(v, dtype=np.float64)))) if np.size(v) else 0)
    ce = counterexample or {}
    if {"prefill", "steps"} <= ce.keys():  # a decode: a prefill from 0 and its steps
        found.append(int(ce["prefill"]) + int(ce["steps"]) - 1)
    vec = lambda k: np.asarray(ce[k], dtype=np.float64)  # an int, or a multi-axis RoPE's position vector
    if {"a", "b"} <= ce.keys():
        found.append(int(np.max(vec("a") + vec("b"))))
    if {"m", "n", "shift"} <= ce.keys():
        found.append(int(np.max(np.maximum(vec("m"), vec("n")) + np.abs(vec("shift")))))
    return max(found) if found else None
