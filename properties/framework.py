"""Properties as data, and one runner used by both pytest and ``ropespec check``.

A property names the invariant it checks (an id of :mod:`ropespec.spec.invariants`), a strategy of cases
for an implementation, a check that calls the implementation and raises :class:`Failure` or returns the
worst error as a fraction of its bound, and pinned cases that always run first.

``@rope_property`` turns a check into a pytest test taking the ``rope_impl`` fixture (and ``rope_replay``, how
the plugin says to replay a failure), so the test files in this package are ordinary pytest modules, while
``ropespec check`` runs the very same :class:`Property` objects through :func:`run_property` and reads the
:class:`~ropespec.properties.results.Result`. The cases they draw are :mod:`ropespec.properties.cases`'; their numerics
:mod:`ropespec.properties.numerics`'; the word a failure carries is named by :mod:`ropespec.properties.diagnose`.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import pkgutil
import re
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from hypothesis import HealthCheck, Phase, configuration, example, given, reject, reproduce_failure, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, Unsatisfiable
from hypothesis.reporting import with_reporter

from ropespec import properties
from ropespec.implementations.contract import FATAL, MAX_TIMEOUTS, OUT_OF_MEMORY, Failure, Fault, Unsupported
from ropespec.implementations.families import Bound
from ropespec.implementations.families.base import DomainError
from ropespec.implementations.implementation import Implementation
from ropespec.properties import profiles
from ropespec.properties.naming import name_failure
from ropespec.properties.results import Result, jsonable
from ropespec.spec import invariants
from ropespec.spec.expectation import Expect
from ropespec.spec.schema import near

PROPERTIES: dict[str, "Property"] = {}

#: at most this often a running property says how far it has got (:func:`progress`)
PROGRESS_EVERY = 0.25
#: the running property's listener and where it has got: (listener, state), set by :func:`run_property`
_RUNNING: contextvars.ContextVar = contextvars.ContextVar("ropespec_running", default=None)
_BLOB = re.compile(r"@reproduce_failure\('([^']+)', b'([^']*)'\)")


def progress(text: str = "") -> None:
    """Say how far the running property has got (its example number, and ``text`` such as "length 2400 of
    4096"). Cheap enough to call at every step of a loop: it passes on at most every PROGRESS_EVERY s."""
    running = _RUNNING.get()
    if running is None:
        return
    listener, state = running
    now = time.monotonic()
    if now - state["said"] < PROGRESS_EVERY:
        return
    state["said"] = now
    where = f"example {state['example']}" + (f", {text}" if text else "")
    listener(state["implementation"], state["invariant"], where, now - state["started"])


@dataclass(frozen=True)
class Property:
    name: str
    invariant: str
    cases: Callable[[Implementation], st.SearchStrategy[dict]]
    rule: str
    check: Callable[[Callable[[Expect], Bound], dict], float | None]
    pinned: Callable[[Implementation], list[dict]]
    #: why it skips an implementation it is about (a reason), or None when it runs
    skip_if: Callable[[Implementation], str | None]
    max_examples: int | None = None  # a cap below the profile's, for expensive properties
    #: why the property is not about an implementation at all, beyond its form (as rope.layout is not about the nd
    #: layout): hidden from reports, where ``skip_if`` gives a reason to skip one it is about
    not_about: Callable[[Implementation], str | None] = lambda impl: None

    @property
    def statement(self) -> str:
        return invariants.get(self.invariant).statement


def rope_property(invariant: str, *, cases, rule: str = "", pinned=None, skip_if=None, max_examples=None,
                  not_about=None):
    """Declare a property of ``invariant``: decorates ``check(bind, case)`` and returns a pytest test. ``rule``: the
    tolerance rule it applies, in a sentence (the bound functions of :mod:`ropespec.spec.tolerance` it combines, and how);
    one property of each invariant states it.

    ``check`` raises :class:`Failure`, or returns the worst error as a fraction of its bound, or a
    pair (that fraction, a note for the report such as where the strict class stopped holding)."""
    invariants.get(invariant)  # fail at import on an unknown id

    def deco(check):
        name = check.__name__.removeprefix("test_")
        prop = Property(
            name=name,
            invariant=invariant,
            cases=cases,
            rule=rule,
            check=check,
            pinned=pinned or (lambda impl: []),
            skip_if=skip_if or (lambda impl: None),
            max_examples=max_examples,
            not_about=not_about or (lambda impl: None),
        )
        if name in PROPERTIES and not _same_source(PROPERTIES[name].check, check):
            raise ValueError(f"duplicate property {name!r}")
        PROPERTIES.setdefault(name, prop)

        def test(rope_impl, rope_replay):
            import pytest  # only where pytest runs the property: ropespec check starts without importing it

            result = run_property(prop, rope_impl)
            if result.status == "skip":
                pytest.skip(f"{invariant}: {result.message}")
            if result.status == "xfail":
                pytest.xfail(f"{invariant}: {result.message}")
            if not result.passed:
                pytest.fail(result.explain(rope_replay(rope_impl, result)), pytrace=False)

        test.__name__ = f"test_{name}"
        test.__doc__ = f"{invariant}: {prop.statement}"
        test.property = prop
        return test

    return deco


def _unsaid(text) -> None:
    """Hypothesis' own reports while a property runs ("Failing test case: inner(case=...)" on a --replay, its
    falsifying examples): the property's Result says the case, in ropespec's words, and the report prints it."""


class _storage:
    """Hypothesis' files (its cache of constants) go to ropespec's cache folder, never into the user's
    working directory, while a property runs (``HYPOTHESIS_STORAGE_DIRECTORY`` overrides)."""

    def __enter__(self):
        self.saved = getattr(configuration, "__hypothesis_home_directory", None)
        if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
            cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            configuration.set_hypothesis_home_dir(os.path.join(cache, "ropespec", "hypothesis"))

    def __exit__(self, *exc):
        configuration.set_hypothesis_home_dir(self.saved)


class _seed_alone:
    """While a property runs, Hypothesis draws none of the constants it collects from the local modules loaded in the
    process (literals of their source, cached per kind of draw). The code under test runs in a worker process, so
    those modules are ropespec's own or whatever its caller imported: with them a seeded run drew other examples as
    other modules happened to be loaded (after ``import ropespec.specdoc``, in a test session, beside a user's
    module), and a printed seed did not say the run. Hypothesis's global constants (0, the edges of a range, ...) are
    still drawn. Where a Hypothesis version lays its providers out otherwise, nothing is changed."""

    _cache: dict = {}  # what Hypothesis caches per kind of draw, from the global constants alone: the same every run

    def __enter__(self):
        from hypothesis.internal.conjecture import providers

        self.providers = providers
        self.saved = None
        if callable(getattr(providers, "_get_local_constants", None)) and hasattr(providers, "CONSTANTS_CACHE"):
            self.saved = providers._get_local_constants, providers.CONSTANTS_CACHE
            none = type(providers._local_constants)()
            providers._get_local_constants, providers.CONSTANTS_CACHE = (lambda: none), self._cache

    def __exit__(self, *exc):
        if self.saved is not None:
            self.providers._get_local_constants, self.providers.CONSTANTS_CACHE = self.saved


class _Abort(BaseException):
    """A fault that ended or stalled the implementation's process (timeout, crash): the property stops
    at the case that caused it, with no shrinking (each further case could cost a whole timeout).
    A BaseException, so that Hypothesis passes it straight through."""

    def __init__(self, fault: Fault, case: dict):
        super().__init__(fault.message)
        self.fault = fault
        self.case = case


class NotChecked(BaseException):
    """Raised by a check when what it cannot do is the implementation's as a whole, not the case's (a function with
    no autograd): the property skips with that reason at once, where a rejected case would be retried hundreds of
    times. A BaseException, so that Hypothesis passes it straight through."""


class _Recorder:
    def __init__(self) -> None:
        self.case: dict | None = None
        self.worst = 0.0
        self.examples = 0
        self.unsupported: str | None = None
        self.note: str | None = None


def _not_about(prop: Property, impl: Implementation) -> str | None:
    """Why the property is not about this implementation (its form and mode do not answer the invariant, or the
    property says why), or None."""
    if not impl.answers(prop.invariant):
        return f"not an invariant of {impl.form.label} implementations ({impl.mode})"
    return prop.not_about(impl)


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
        # Hypothesis's explain phase re-runs a shrunk failure hundreds of times to say which parts of it matter: a
        # failure here says its own evidence, and the phase cost two minutes of a T5 lookup's verdict
        phases=[p for p in base.phases if p != Phase.explain],
    )


def run_property(
    prop: Property,
    impl: Implementation,
    *,
    profile: str | None = None,
    seed_value: int | None = None,
    replay: tuple[str, str] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    should_stop: Callable[[], None] | None = None,
) -> Result:
    """Run ``prop`` on ``impl``; never raises for anything the implementation does. ``on_progress(implementation,
    invariant, text, seconds)`` hears how far it has got (:func:`progress`); ``should_stop()`` is called before
    every example and raises to stop the run (a Ctrl-C that a callback swallowed)."""
    profile = profile or profiles.active()
    res = Result(impl.name, prop.name, prop.invariant, "pass", seed=seed_value, profile=profile)
    not_about = _not_about(prop, impl)
    res.applicable = not_about is None
    reason = impl.skip_reason or not_about or (res.applicable and impl.halted) or prop.skip_if(impl)
    if reason:
        res.status, res.message = "skip", reason
        return res
    rec = _Recorder()
    now = time.monotonic()
    state = {"implementation": impl.name, "invariant": prop.invariant, "started": now, "said": now, "example": 0}
    token = _RUNNING.set((on_progress, state) if on_progress else None)
    try:
        test = _hypothesis_test(prop, impl, rec, state, profile, seed_value, replay, should_stop)
        with _storage(), _seed_alone(), with_reporter(_unsaid):
            test()
    except NotChecked as e:
        res.status, res.message = "skip", str(e)
    except _Abort as a:
        rec.case = a.case
        _fail(res, a.fault, rec)
        _halt_after(prop, impl, a.fault)
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
        if rec.worst > 1.0:  # a status and its worst ratio come from one comparison: past the bound is no pass
            res.status = "error"
            res.message = (f"ropespec error in {prop.name}: it measured {rec.worst:.3g} times its bound and did not "
                           f"fail")
        if rec.unsupported and rec.examples:
            res.message = "; ".join(filter(None, [res.message, f"some cases unsupported: {rec.unsupported}"]))
    finally:
        _RUNNING.reset(token)  # nothing runs now, whatever ended the property (Ctrl-C included)
    res.examples = rec.examples
    _declared_failure(res, prop, impl)
    if res.status == "fail":
        try:
            name_failure(res, impl)
        except DomainError as e:  # a probe of the diagnosis outside the domain: ours, and said so
            res.status, res.message = "error", f"ropespec error in {prop.name} while naming its failure: {e}"
    return res


def _hypothesis_test(prop: Property, impl: Implementation, rec: _Recorder, state: dict, profile: str,
                     seed_value: int | None, replay: tuple[str, str] | None, should_stop=None):
    """The property as a Hypothesis test of its cases, pinned cases first, under the profile's settings."""

    def rejecting(get):
        """impl.bind / impl.fresh, with a declined expectation turned into a rejected case."""

        def wrapped(expect: Expect) -> Bound:
            try:
                return get(expect)
            except Unsupported as e:
                rec.unsupported = str(e)
                reject()

        return wrapped

    made: list = []  # the fresh ones of the example running, let go of when it ends

    def fresh(expect: Expect) -> Bound:
        made.append(impl.fresh(expect))
        return made[-1]

    bind = rejecting(impl.bind)
    bind.fresh = rejecting(fresh)  # decode mode: a new stateful decoder per case
    bind.strict = impl.bind  # raises Unsupported instead of rejecting the case

    def restart(expect: Expect) -> Bound:
        """A fresh instance for ``expect``: the implementation's worker process restarted (a plain function's module
        state, a factory's caches, gone) and its factory called anew; in-process, only the factory call is new."""
        stop = getattr(impl.host, "stop", None)
        if stop is not None and impl.isolation == "worker process":
            stop()
        return bind.fresh(expect)

    bind.restart = restart

    def inner(case: dict) -> None:
        if should_stop is not None:
            should_stop()
        rec.case = case
        rec.examples += 1
        state["example"] = rec.examples
        progress()
        try:
            ratio = prop.check(bind, case)
        except (NotImplementedError, Unsupported) as e:  # the reference or the check cannot handle this case, or a
            rec.unsupported = str(e)  # call ran what cannot be judged here (Triton's interpreter in a dtype it miscomputes)
            reject()
        except Fault as e:
            if e.diagnosis in FATAL:
                raise _Abort(e, case) from None
            raise
        finally:
            _release(impl, made)
        if isinstance(ratio, tuple):
            ratio, rec.note = ratio
        if ratio is not None and np.isfinite(ratio):
            rec.worst = max(rec.worst, float(ratio))

    test = given(prop.cases(impl))(inner)
    for case in reversed(prop.pinned(impl)):
        test = example(case)(test)
    chosen = hypothesis_settings(profile)
    if prop.max_examples is not None and prop.max_examples < chosen.max_examples:
        chosen = settings(chosen, max_examples=prop.max_examples)
    test = chosen(test)
    if seed_value is not None:
        test = seed(seed_value)(test)
    if replay is not None:
        test = reproduce_failure(replay[0], replay[1].encode("ascii"))(test)
    return test


def _release(impl: Implementation, made: list) -> None:
    """Let go of the example's fresh ones; a worker that cannot answer now (stopped, crashed) holds none of them."""
    while made:
        try:
            impl.release(made.pop())
        except Fault:
            made.clear()


def _halt_after(prop: Property, impl: Implementation, fault: Fault) -> None:
    """No further property runs on an implementation that ran out of memory (each would build the same and run out
    again), or that has timed out in MAX_TIMEOUTS properties (a target that hangs hangs again)."""
    if fault.cause == OUT_OF_MEMORY:
        impl.halted = f"not run: {prop.invariant} ({prop.name}) ran out of memory on this implementation"
    elif fault.diagnosis == "timeout":
        impl.timed_out.append(f"{prop.invariant} ({prop.name})")
        if len(impl.timed_out) >= MAX_TIMEOUTS:
            impl.halted = (f"not run: calls timed out in {' and '.join(impl.timed_out)}; the rest of this "
                           f"implementation is not run (a target that hangs hangs again)")


def _declared_failure(res: Result, prop: Property, impl: Implementation) -> None:
    """A failure the implementation declares (``expected_failures``), or of a documented non-invariant of its family,
    is an expected failure (a documented non-invariant's names no fault); one that held anyway says so."""
    documented = invariants.get(prop.invariant).expected_to_fail or None
    declared = impl.expected_failures.get(prop.invariant) or documented
    if declared is None:
        return
    if res.status == "fail":
        res.status = "xfail"
        res.note = f"expected failure ({declared})"
        if documented:
            res.diagnosis = None
    elif res.status == "pass":  # not an error: the examples drawn did not show the documented flaw
        res.message = f"declared to fail ({declared}), but it held on these examples"


def _fail(res: Result, e: Failure, rec: _Recorder) -> None:
    res.status = "fail"
    res.diagnosis = e.diagnosis
    res.failure = e
    res.worst = e.ratio
    res.counterexample = {k: jsonable(v) for k, v in (rec.case or {}).items()}
    for note in getattr(e, "__notes__", []):
        m = _BLOB.search(note)
        if m:
            res.replay = ["--replay", f"{m.group(1)}:{m.group(2)}"]
    if isinstance(e, Fault) and res.diagnosis is None:
        res.diagnosis = "unknown"


def _same_source(a, b) -> bool:
    """Whether two checks are one function of one file: ``pytest properties`` in a clone imports a section's file under
    the name its folder gives it (properties.test_rotation) beside ropespec's own (ropespec.properties.test_rotation),
    and the property is still one."""
    return (a.__qualname__, a.__code__.co_filename, a.__code__.co_firstlineno) == (
        b.__qualname__, b.__code__.co_filename, b.__code__.co_firstlineno)


def all_properties() -> list[Property]:
    """Every property, in spec-section order (importing the section modules registers them)."""
    for info in pkgutil.iter_modules(properties.__path__):  # every properties/test_*.py module
        if info.name.startswith("test_"):
            importlib.import_module(f"{properties.__name__}.{info.name}")
    order = {inv: i for i, inv in enumerate(invariants.REGISTRY)}
    return sorted(PROPERTIES.values(), key=lambda p: order[p.invariant])


def select_properties(invariant_ids: list[str] | None = None) -> list[Property]:
    """The properties of these invariants; ``ID:property`` picks one property of an invariant that has
    several (``rope.conformance:large_positions``), as replay commands do."""
    props = all_properties()
    if invariant_ids:
        known = {p.invariant for p in props} | {f"{p.invariant}:{p.name}" for p in props}
        unknown = [i for i in invariant_ids if i not in known]
        if unknown:
            close = [c for c in (near(i, known) for i in unknown) if c]
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"--invariant: unknown {', '.join(unknown)}{hint} (ropespec invariants lists the "
                             f"{len({p.invariant for p in props})} invariants; ID:property picks one property)")
        props = [p for p in props if p.invariant in invariant_ids or f"{p.invariant}:{p.name}" in invariant_ids]
    return props


__all__ = ["PROPERTIES", "NotChecked", "Property", "all_properties", "hypothesis_settings", "progress", "rope_property",
           "run_property", "select_properties"]
