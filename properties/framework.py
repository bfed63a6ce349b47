"""Properties as data, and one runner used by both pytest and ``ropespec check``.

A property names the invariant it checks (an id of :mod:`spec.invariants`), a strategy of cases
for a subject, a check that calls the implementation and raises :class:`Failure` or returns the
worst error as a fraction of its bound, and pinned cases that always run first.

``@rope_property`` turns a check into a pytest test taking the ``rope_subject`` fixture, so the
test files in this package are ordinary pytest modules, while ``ropespec check`` runs the very same
:class:`Property` objects through :func:`run_property` and reads the :class:`Result`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, example, given, reject, reproduce_failure, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, Unsatisfiable

from implementations.contract import FATAL, MAX_TIMEOUTS, OUT_OF_MEMORY, Bound, Failure, Fault, Subject, Unsupported
from properties import profiles
from properties.strategies import boundary_positions, expectations, make_vectors, positions, vectors
import reference
from spec import invariants, tolerance
from spec.expectation import Expect

PROPERTIES: dict[str, "Property"] = {}

#: how to print a replay command for a failure inside pytest (set by ropespec's plugin: the command line
#: is ropespec's, and properties import nothing of ropespec)
REPLAY: Callable[[Subject, "Result"], str | None] | None = None
_BLOB = re.compile(r"@reproduce_failure\('([^']+)', b'([^']*)'\)")

#: told how far the running property has got, at most every PROGRESS_EVERY seconds:
#: ``PROGRESS(implementation, invariant, text, seconds it has run)`` (set by ropespec's command line)
PROGRESS: Callable[[str, str, str, float], None] | None = None
PROGRESS_EVERY = 0.25
_running: dict = {}


def progress(text: str = "") -> None:
    """Say how far the running property has got (its example number, and ``text`` such as "length 2400 of
    4096"). Cheap enough to call at every step of a loop: it passes on at most every PROGRESS_EVERY s."""
    if PROGRESS is None or not _running:
        return
    now = time.monotonic()
    if now - _running["said"] < PROGRESS_EVERY:
        return
    _running["said"] = now
    where = f"example {_running['example']}" + (f", {text}" if text else "")
    PROGRESS(_running["implementation"], _running["invariant"], where, now - _running["started"])


@dataclass(frozen=True)
class Property:
    name: str
    invariant: str
    cases: Callable[[Subject], st.SearchStrategy[dict]]
    check: Callable[[Callable[[Expect], Bound], dict], float | None]
    pinned: Callable[[Subject], list[dict]]
    applies: Callable[[Subject], str | None]
    max_examples: int | None = None  # a cap below the profile's, for expensive properties
    #: why the property is not about this subject at all (as an invariant of another family is not): not applicable,
    #: where ``applies`` gives a reason to skip an applicable one
    about: Callable[[Subject], str | None] = lambda subject: None

    @property
    def statement(self) -> str:
        return invariants.get(self.invariant).statement


@dataclass
class Result:
    """The outcome of one property on one subject."""

    implementation: str
    property: str
    invariant: str
    status: str  # "pass" | "fail" | "skip" | "error" | "xfail" (a declared, documented failure)
    diagnosis: str | None = None
    message: str = ""
    counterexample: dict | None = None
    worst: float | None = None  # worst error seen, as a fraction of its bound
    examples: int = 0
    replay: list[str] = field(default_factory=list)  # extra CLI arguments that replay the failure
    seed: int | None = None
    profile: str | None = None
    applicable: bool = True  # False: the property is for the other mode (rope vs decode); reports hide it

    @property
    def passed(self) -> bool:
        return self.status in ("pass", "skip", "xfail")

    def to_json(self) -> dict:
        return {
            "invariant": self.invariant,
            "property": self.property,
            "status": self.status,
            "diagnosis": self.diagnosis,
            "message": self.message,
            "counterexample": self.counterexample,
            "worst": self.worst,
            "examples": self.examples,
        }

    def explain(self, replay_command: str | None = None, values: str = "the replay command with --json PATH") -> str:
        """The failure as text: message, minimal counterexample, and the command that replays it.
        ``values``: where the counterexample's full values are (a --json file, or how to get one)."""
        lines = [f"{self.implementation} :: {self.invariant} ({self.property}): {self.status}"
                 + (f" [{self.diagnosis}]" if self.diagnosis else "")]
        lines.append(f"  {self.message}")
        if self.counterexample:
            lines.append(f"  counterexample (full values: {values}):")
            for k, v in self.counterexample.items():
                lines.append(f"    {k} = {_brief(v)}")
        if replay_command:
            lines.append(f"  replay: {replay_command}")
        return "\n".join(lines)


def _brief(v: Any) -> str:
    """A short rendering of a counterexample value for the text report."""
    if isinstance(v, dict):
        return json.dumps(v, separators=(",", ":"))
    if isinstance(v, list) and v and isinstance(v[0], list):
        a = np.array(v)
        return f"array{a.shape} " + np.array2string(a, precision=9, threshold=12, edgeitems=3, separator=", ",
                                                  max_line_width=10**6).replace("\n", "")
    return json.dumps(v)


def _jsonable(v: Any) -> Any:
    if isinstance(v, Expect):
        return v.to_dict()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def promised(subject: Subject, drawn: st.SearchStrategy[Expect]) -> st.SearchStrategy[Expect]:
    """Drawn expectations in the precision class a factory promises (``make.promise``, e.g. the shipped
    numpy and torch factories promise the strict class): shipped code is held to its own promise."""
    if not subject.promise:
        return drawn
    return drawn.map(lambda e: e.replace(**subject.promise))


def expect_strategy(subject: Subject, *, partial: bool | None = None) -> st.SearchStrategy[Expect]:
    """The subject's fixed expectation, or drawn ones for a factory without one."""
    if subject.expect is not None:
        return st.just(subject.expect)
    return promised(subject, expectations(dtype=subject.dtype, max_position=subject.max_position, partial=partial))


def pinned_expects(subject: Subject, *, partial: bool | None = None) -> list[Expect]:
    """Expectations every property tries first: the fixed one, or d = 2 (and a partial one)."""
    if subject.expect is not None:
        return [subject.expect]
    base = Expect(dtype=subject.dtype, max_position=subject.max_position, **subject.promise)
    if partial:
        return [base.replace(head_dim=8, rotary_dim=4)]
    return [base.replace(head_dim=2), base.replace(head_dim=64, convention="interleaved")]


def pinned_positions(subject: Subject) -> list[int]:
    """p = 0, p = 1 and p = max_position - 1."""
    return [0, 1, subject.max_position - 1]


def rows_cases(subject: Subject, *, partial: bool | None = None, with_x: bool = True) -> st.SearchStrategy[dict]:
    """Cases of one call: an expectation, 1 to 8 positions and (``with_x``) as many rows x."""

    @st.composite
    def build(draw):
        e = draw(expect_strategy(subject, partial=partial), label="expect")
        n = draw(st.integers(1, 8), label="n")
        pos = draw(st.lists(positions(max_value=e.max_position), min_size=n, max_size=n), label="positions")
        case = {"expect": e, "positions": np.array(pos, dtype=np.int64)}
        if with_x:
            case["x"] = draw(vectors(e, n), label="x")
        return case

    return build()


def rows_pinned(subject: Subject, *, partial: bool | None = None, with_x: bool = True) -> list[dict]:
    """The pinned cases of :func:`rows_cases`: positions 0, 1 and max_position - 1."""
    pos = np.array(pinned_positions(subject), dtype=np.int64)
    out = []
    for e in pinned_expects(subject, partial=partial):
        case = {"expect": e, "positions": pos}
        if with_x:
            case["x"] = make_vectors(e, len(pos))
        out.append(case)
    return out


def rope_property(invariant: str, *, cases, pinned=None, applies=None, max_examples=None, about=None):
    """Declare a property of ``invariant``: decorates ``check(bind, case)`` and returns a pytest test.

    ``check`` raises :class:`Failure`, or returns the worst error as a fraction of its bound, or a
    pair (that fraction, a note for the report such as where the strict class stopped holding)."""
    invariants.get(invariant)  # fail at import on an unknown id

    def deco(check):
        name = check.__name__.removeprefix("test_")
        prop = Property(
            name=name,
            invariant=invariant,
            cases=cases,
            check=check,
            pinned=pinned or (lambda subject: []),
            applies=applies or (lambda subject: None),
            max_examples=max_examples,
            about=about or (lambda subject: None),
        )
        if name in PROPERTIES:
            raise ValueError(f"duplicate property {name!r}")
        PROPERTIES[name] = prop

        def test(rope_subject):
            import pytest

            result = run_property(prop, rope_subject)
            if result.status == "skip":
                pytest.skip(f"{invariant}: {result.message}")
            if result.status == "xfail":
                pytest.xfail(f"{invariant}: {result.message}")
            if not result.passed:
                pytest.fail(result.explain(REPLAY(rope_subject, result) if REPLAY else None), pytrace=False)

        test.__name__ = f"test_{name}"
        test.__doc__ = f"{invariant}: {prop.statement}"
        test.property = prop
        return test

    return deco


class _storage:
    """Hypothesis' files (its cache of constants) go to ropespec's cache folder, never into the user's
    working directory, while a property runs (``HYPOTHESIS_STORAGE_DIRECTORY`` overrides)."""

    def __enter__(self):
        import os

        from hypothesis import configuration

        self.saved = getattr(configuration, "__hypothesis_home_directory", None)
        if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
            cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            configuration.set_hypothesis_home_dir(os.path.join(cache, "ropespec", "hypothesis"))

    def __exit__(self, *exc):
        from hypothesis import configuration

        configuration.set_hypothesis_home_dir(self.saved)


class _Abort(BaseException):
    """A fault that ended or stalled the implementation's process (timeout, crash): the property stops
    at the case that caused it, with no shrinking (each further case could cost a whole timeout).
    A BaseException, so that Hypothesis passes it straight through."""

    def __init__(self, fault: Fault, case: dict):
        super().__init__(fault.message)
        self.fault = fault
        self.case = case


class _Recorder:
    def __init__(self) -> None:
        self.case: dict | None = None
        self.worst = 0.0
        self.examples = 0
        self.unsupported: str | None = None
        self.note: str | None = None


def _kind_reason(prop: Property, subject: Subject) -> str | None:
    families = invariants.get(prop.invariant).families
    if subject.kind not in families:
        return f"an invariant of {' and '.join(families)} implementations; this is a {subject.kind} implementation"
    return prop.about(subject)


def hypothesis_settings(profile: str | None = None) -> settings:
    """Settings the runner uses: the profile's example counts, and what the runner needs."""
    base = settings.get_profile(profiles.hypothesis_name(profile or profiles.active()))
    return settings(
        base,
        database=None,
        deadline=None,
        print_blob=True,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )


def run_property(
    prop: Property,
    subject: Subject,
    *,
    profile: str | None = None,
    seed_value: int | None = None,
    replay: tuple[str, str] | None = None,
) -> Result:
    """Run ``prop`` on ``subject``; never raises for anything the implementation does."""
    profile = profile or profiles.active()
    res = Result(subject.name, prop.name, prop.invariant, "pass", seed=seed_value, profile=profile)
    kind_reason = _kind_reason(prop, subject)
    res.applicable = kind_reason is None
    reason = subject.skip_reason or kind_reason or (res.applicable and subject.halted) or prop.applies(subject)
    if reason:
        res.status, res.message = "skip", reason
        return res
    rec = _Recorder()

    def rejecting(get):
        """subject.bind / subject.fresh, with a declined expectation turned into a rejected case."""

        def wrapped(expect: Expect) -> Bound:
            try:
                return get(expect)
            except Unsupported as e:
                rec.unsupported = str(e)
                reject()

        return wrapped

    bind = rejecting(subject.bind)
    bind.fresh = rejecting(subject.fresh)  # decode mode: a new stateful decoder per case
    bind.strict = subject.bind  # raises Unsupported instead of rejecting the case

    def inner(case: dict) -> None:
        rec.case = case
        rec.examples += 1
        _running["example"] = rec.examples
        progress()
        try:
            ratio = prop.check(bind, case)
        except NotImplementedError as e:  # the reference or the check cannot handle this case
            rec.unsupported = str(e)
            reject()
        except Fault as e:
            if e.diagnosis in FATAL:
                raise _Abort(e, case) from None
            raise
        if isinstance(ratio, tuple):
            ratio, rec.note = ratio
        if ratio is not None and np.isfinite(ratio):
            rec.worst = max(rec.worst, float(ratio))

    test = given(prop.cases(subject))(inner)
    for case in reversed(prop.pinned(subject)):
        test = example(case)(test)
    chosen = hypothesis_settings(profile)
    if prop.max_examples is not None and prop.max_examples < chosen.max_examples:
        chosen = settings(chosen, max_examples=prop.max_examples)
    test = chosen(test)
    if seed_value is not None:
        test = seed(seed_value)(test)
    if replay is not None:
        test = reproduce_failure(replay[0], replay[1].encode("ascii"))(test)
    now = time.monotonic()
    _running.update(implementation=subject.name, invariant=prop.invariant, started=now, said=now, example=0)
    try:
        with _storage():
            test()
    except _Abort as a:
        rec.case = a.case
        _fail(res, a.fault, rec)
        if a.fault.cause == OUT_OF_MEMORY:  # every later property would build the same and run out again
            subject.halted = f"not run: {prop.invariant} ({prop.name}) ran out of memory on this implementation"
        elif a.fault.diagnosis == "timeout":
            subject.timed_out.append(f"{prop.invariant} ({prop.name})")
            if len(subject.timed_out) >= MAX_TIMEOUTS:  # it hangs: each further property would cost a --timeout
                subject.halted = (f"not run: calls timed out in {' and '.join(subject.timed_out)}; the rest of this "
                                  f"implementation is not run (a target that hangs hangs again)")
    except Failure as e:
        _fail(res, e, rec)
    except FlakyFailure as e:
        inner_failures = [x for x in e.exceptions if isinstance(x, Failure)]
        msg = inner_failures[0].message if inner_failures else str(e)
        _fail(res, Failure(f"the failure did not reproduce on the same input: {msg}", "nondeterministic"), rec)
    except Unsatisfiable:
        res.status = "skip"
        res.message = f"no supported case: {rec.unsupported or 'every drawn case was rejected'}"
    except Exception as e:  # a bug of ours, not of the implementation: say so plainly
        res.status = "error"
        res.message = f"ropespec error in {prop.name}: {type(e).__name__}: {e}"
    else:
        res.worst = rec.worst
        res.message = rec.note or ""
        if rec.unsupported and rec.examples:
            res.message = "; ".join(filter(None, [res.message, f"some cases unsupported: {rec.unsupported}"]))
    finally:
        _running.clear()  # nothing runs now, whatever ended the property (Ctrl-C included)
    res.examples = rec.examples
    documented = invariants.get(prop.invariant).expected_to_fail or None
    declared = subject.expected_failures.get(prop.invariant) or documented
    if declared is not None:
        if res.status == "fail":
            res.status = "xfail"
            res.message = f"expected failure ({declared}): {res.message}"
            if documented:  # a documented non-invariant of the family: its failure is no fault to be named
                res.diagnosis = None
        elif res.status == "pass":  # not an error: the examples drawn did not show the documented flaw
            res.message = f"declared to fail ({declared}), but it held on these examples"
    if res.status == "fail" and res.diagnosis is None:
        _diagnose(res, subject)
    elif res.status == "fail":
        _root_cause(res, subject)
    return res


#: words a property gives from what it measured along the expected pairs; a structural fault underneath
#: (another pairing or layout, no rotation, NaN) is the root cause and takes their place
_MEASURED = ("scaling", "attention-factor", "direction", "double-rotation", "position-offset", "base", "angle-precision")


#: the kinds the RoPE diagnoses name: apply functions, and table builders through the RoPE their table defines
_DIAGNOSED = ("rope", "table")


def _as_rope(subject: Subject, expect: Expect):
    """The implementation as f(x, positions) for the diagnoses: the bound function, or R(table(p)) x."""
    f = subject.bind(expect)
    return f.rotate_by_table if subject.kind == "table" else f


def _expect_of(res: Result, subject: Subject) -> Expect | None:
    expect = subject.expect
    if expect is None and res.counterexample and isinstance(res.counterexample.get("expect"), dict):
        expect = Expect.from_dict(res.counterexample["expect"])
    return expect


def _root_cause(res: Result, subject: Subject) -> None:
    """One root cause, one word: a failure named from a measurement says "follows from <word>" and takes
    that word when the implementation has a structural fault (properties.diagnose.root_cause)."""
    if subject.kind not in _DIAGNOSED or res.diagnosis not in _MEASURED:
        return
    expect = _expect_of(res, subject)
    if expect is None:
        return
    from properties.diagnose import root_cause

    try:
        found = root_cause(_as_rope(subject, expect), expect)
    except (Unsupported, Failure):
        return
    if found and found[0] != res.diagnosis:
        res.message = f"{res.message} -- follows from {found[0]}: {found[1]}"
        res.diagnosis = found[0]


def _diagnose(res: Result, subject: Subject) -> None:
    """Name the fault of a failure that came without a diagnosis, from evidence (properties.diagnose)."""
    if res.diagnosis is not None or subject.kind not in _DIAGNOSED:
        res.diagnosis = res.diagnosis or "unknown"
        return
    expect = _expect_of(res, subject)
    found = None
    if expect is not None:
        from properties.diagnose import diagnose

        try:
            found = diagnose(_as_rope(subject, expect), expect, reach=_reach(res.counterexample))
        except (Unsupported, Failure):
            found = None
    if found:
        res.diagnosis, evidence = found
        res.message = f"{res.message} -- {res.diagnosis}: {evidence}"
    else:
        res.diagnosis = "unknown"


def _reach(counterexample: dict | None) -> int | None:
    """The largest position a failing case called the implementation at (None: it says no position)."""
    found = []
    for key in ("positions", "offsets", "a", "b", "m", "n", "shift", "position"):
        v = (counterexample or {}).get(key)
        if v is not None:
            found.append(int(np.max(np.abs(np.asarray(v, dtype=np.float64)))) if np.size(v) else 0)
    if counterexample and {"a", "b"} <= counterexample.keys():
        found.append(int(counterexample["a"]) + int(counterexample["b"]))
    if counterexample and {"m", "n", "shift"} <= counterexample.keys():
        found.append(max(int(counterexample["m"]), int(counterexample["n"])) + abs(int(counterexample["shift"])))
    return max(found) if found else None


#: numpy 2's scalar repr, np.float64(0.5), in a message reads as code: the number is what is meant
_NUMPY_REPR = re.compile(r"np\.(?:float|int|uint|complex)\d*\(([^()]*)\)")


def _fail(res: Result, e: Failure, rec: _Recorder) -> None:
    res.status = "fail"
    res.diagnosis = e.diagnosis
    res.message = _NUMPY_REPR.sub(r"\1", e.message)
    res.worst = e.ratio
    res.counterexample = {k: _jsonable(v) for k, v in (rec.case or {}).items()}
    for note in getattr(e, "__notes__", []):
        m = _BLOB.search(note)
        if m:
            res.replay = ["--replay", f"{m.group(1)}:{m.group(2)}"]
    if isinstance(e, Fault) and res.diagnosis is None:
        res.diagnosis = "unknown"


def all_properties() -> list[Property]:
    """Every property, in spec-section order (importing the section modules registers them)."""
    import importlib

    import pkgutil

    import properties

    for info in pkgutil.iter_modules(properties.__path__):  # every properties/test_*.py module
        if info.name.startswith("test_"):
            importlib.import_module(f"properties.{info.name}")
    order = {inv: i for i, inv in enumerate(invariants.REGISTRY)}
    return sorted(PROPERTIES.values(), key=lambda p: order[p.invariant])


def pair_norms(expect: Expect, x: np.ndarray, *, output: bool = False) -> np.ndarray:
    """||(x_a, x_b)|| for every row and pair: shape (n, n_pairs). ``output``: x is an output, whose
    pairs sit where the convention writes them (:meth:`Expect.out_pairs`)."""
    a, b = (np.array(ix) for ix in zip(*(expect.out_pairs() if output else expect.pairs())))
    return np.hypot(x[:, a], x[:, b])


def output_bound(expect: Expect, x: np.ndarray, positions: np.ndarray, *, pairing_free: bool = False) -> np.ndarray:
    """Allowed error of each output component of one call f(x, positions): shape (n, head_dim).

    The tolerance model's bound at the call's own frequencies (seq_len = max(positions) + 1 for the
    types that depend on it), scaled by the attention factor. ``pairing_free`` bounds each pair norm
    whatever the pairing, for properties that must hold for any pairing."""
    positions = np.asarray(positions, dtype=np.int64)
    g = reference.attention_factor(expect)
    th = reference.thetas(expect, reference.seq_len_of(positions))
    if pairing_free:
        norms = np.broadcast_to(tolerance.pairing_free_norm(x), (len(x), expect.n_pairs))
    else:
        norms = pair_norms(expect, x)
    return per_dim(expect, tolerance.component_bound(expect, positions, th, g * norms))


def exact(expect: Expect, x: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact rotation of rows ``x`` to compare an output with, and a bound on that reference's own
    error per component (shape (n, head_dim)): ``reference.fast`` (double-double, 2 ulp of the pair
    norm) where ``tolerance.fast_reference_suffices``, which the bound then carries; the mpmath
    reference, exact to half an ulp of float64, otherwise (0)."""
    positions = np.asarray(positions, dtype=np.int64)
    if tolerance.fast_reference_suffices(expect):
        g = reference.attention_factor(expect)
        own = per_dim(expect, tolerance.FAST_REFERENCE_ERROR * g * pair_norms(expect, x))
        return reference.fast.apply(expect, x, positions), own
    return reference.apply(expect, x, positions), np.zeros((len(x), expect.head_dim))


def to_output_layout(expect: Expect, x: np.ndarray) -> np.ndarray:
    """x (n, head_dim) with each dim moved to where the convention writes it (a copy)."""
    out = np.empty_like(x)
    out[:, expect.layout()] = x
    return out


def to_input_layout(expect: Expect, y: np.ndarray) -> np.ndarray:
    """An output y (n, head_dim) read back into the input layout: the inverse of :func:`to_output_layout`."""
    return np.asarray(y)[:, expect.layout()]


def per_dim(expect: Expect, per_pair: np.ndarray, passthrough: np.ndarray | float = 0.0) -> np.ndarray:
    """Spread an (n, n_pairs) array onto (n, head_dim): both dims of a pair get the pair's value;
    pass-through dims (at and beyond rotary_dim) get ``passthrough`` (a scalar or an (n, head_dim) array)."""
    out = np.array(np.broadcast_to(passthrough, (per_pair.shape[0], expect.head_dim)), dtype=np.float64)
    out[:, : expect.rotary_dim] = 0.0
    a, b = (np.array(ix) for ix in zip(*expect.out_pairs()))
    out[:, a] = per_pair
    out[:, b] = per_pair
    return out


__all__ = [
    "PROPERTIES",
    "all_properties",
    "Property",
    "Result",
    "boundary_positions",
    "expect_strategy",
    "hypothesis_settings",
    "output_bound",
    "pair_norms",
    "per_dim",
    "to_input_layout",
    "to_output_layout",
    "pinned_expects",
    "pinned_positions",
    "promised",
    "rows_cases",
    "rows_pinned",
    "rope_property",
    "run_property",
]
