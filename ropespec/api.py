"""Running checks: the engine behind ``ropespec check`` and the pytest plugin."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Callable

from implementations.contract import Subject
from properties.framework import Property, Result, all_properties, run_property


#: statuses that mean a property really ran on the implementation
RAN = ("pass", "fail", "error", "xfail")


@dataclass
class SubjectReport:
    subject: Subject
    results: list[Result] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def checked(self) -> bool:
        """At least one property ran on this implementation (not every one skipped)."""
        return any(r.status in RAN for r in self.results)

    @property
    def relevant(self) -> bool:
        """At least one selected property is about this kind of implementation."""
        return any(r.applicable for r in self.results)

    def why_unchecked(self) -> str:
        """Why nothing ran, in one clause: the subject's skip reason or its properties' (distinct) ones."""
        if self.subject.skip_reason:
            return self.subject.skip_reason
        reasons = list(dict.fromkeys(r.message for r in self.results if r.applicable and r.message))
        if not reasons:
            return "no property applies to it"
        return "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more reasons)" if len(reasons) > 3 else "")

    def to_json(self) -> dict:
        s = self.subject
        out = s.output()
        return {
            "name": s.name,
            "target": s.target,
            "mode": s.mode,
            "array": s.array,
            "dtype": s.dtype,
            "expect": s.expect.to_dict() if s.expect is not None else None,
            "isolation": s.isolation,
            "warmup_seconds": s.warmup_seconds,
            "output": out.to_json() if out is not None and out.total else None,
            "left_behind": list(s.left_behind),
            "checked": self.checked,
            "passed": self.passed,
            "results": [r.to_json() | {"replay": replay_command(s, r)} for r in self.results],
        }


def select_properties(invariant_ids: list[str] | None = None) -> list[Property]:
    """The properties of these invariants; ``ID:property`` picks one property of an invariant that has
    several (``rope.conformance:large_positions``), as replay commands do."""
    props = all_properties()
    if invariant_ids:
        known = {p.invariant for p in props} | {f"{p.invariant}:{p.name}" for p in props}
        unknown = [i for i in invariant_ids if i not in known]
        if unknown:
            raise ValueError(f"--invariant: unknown {', '.join(unknown)} (known: "
                             f"{', '.join(sorted({p.invariant for p in props}))}; "
                             f"ID:property picks one property)")
        props = [p for p in props if p.invariant in invariant_ids or f"{p.invariant}:{p.name}" in invariant_ids]
    return props


def property_id(result: Result) -> str:
    """What --invariant takes to run exactly the property a result came from: the invariant id, or
    ``ID:property`` when the invariant has more than one property."""
    siblings = [p for p in all_properties() if p.invariant == result.invariant]
    return result.invariant if len(siblings) <= 1 else f"{result.invariant}:{result.property}"


def check_subjects(
    subjects: list[Subject],
    properties: list[Property],
    *,
    profile: str,
    seed: int,
    replay: tuple[str, str] | None = None,
    on_result: Callable[[Result], None] | None = None,
    on_subject: Callable[[SubjectReport], None] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    into: list[SubjectReport] | None = None,
) -> list[SubjectReport]:
    """Run ``properties`` on each subject in turn, stopping each subject's worker when it is done.
    Reports are appended to ``into`` as they start, so an interrupted run keeps what finished.
    ``on_progress(implementation, invariant, text, seconds)``: how far a running property has got
    (:func:`properties.framework.progress`)."""
    from properties import framework

    reports = into if into is not None else []
    saved, framework.PROGRESS = framework.PROGRESS, on_progress or framework.PROGRESS
    try:
        _check_each(subjects, properties, reports, profile, seed, replay, on_result, on_subject)
    finally:
        framework.PROGRESS = saved
    return reports


def _check_each(subjects, properties, reports, profile, seed, replay, on_result, on_subject) -> None:
    for s in subjects:
        rep = SubjectReport(s)
        reports.append(rep)
        try:
            for p in properties:
                r = run_property(p, s, profile=profile, seed_value=seed, replay=replay)
                rep.results.append(r)
                if on_result:
                    on_result(r)
        finally:
            s.close()
        if on_subject:
            on_subject(rep)


def check_in_processes(
    specs: list[dict],
    invariant_ids: list[str] | None,
    *,
    profile: str,
    seed: int,
    replay: tuple[str, str] | None,
    jobs: int,
    on_result: Callable[[Result], None] | None = None,
    on_subject: Callable[[SubjectReport], None] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    into: list[SubjectReport] | None = None,
) -> list[SubjectReport]:
    """check_subjects spread over ``jobs`` runner processes (:mod:`ropespec.runner`), one implementation
    at a time each. ``specs`` are :func:`implementations.make_subject` keyword arguments; each runner loads
    its implementation itself (in its own worker process). Results stream back as they finish; on
    Ctrl-C or SIGTERM (KeyboardInterrupt here) every runner is killed at once and ``into`` holds what
    finished. Raises TargetError when a TARGET does not load."""
    from collections import deque
    from multiprocessing.connection import wait

    from implementations.contract import TargetError
    from implementations.isolation import Child, crash_words

    reports = into if into is not None else []
    slots: dict[int, SubjectReport] = {}
    queue = deque(range(len(specs)))
    runners: list[Child] = []
    busy: dict = {}

    def publish():
        reports[:] = [slots[k] for k in sorted(slots)]

    def assign(r: Child) -> None:
        if queue:
            i = queue.popleft()
            r.send(("job", i, specs[i], invariant_ids, profile, seed, replay))
            busy[r.conn] = (r, i)

    try:
        runners = [Child("ropespec.runner") for _ in range(max(1, min(jobs, len(specs))))]
        for r in runners:
            assign(r)
        while busy:
            for conn in wait(list(busy), timeout=0.5):
                r, i = busy[conn]
                try:
                    msg = conn.recv()
                except (EOFError, OSError):  # the runner itself died: ropespec's failure, said as an error
                    del busy[conn]
                    rep = slots.setdefault(i, SubjectReport(_placeholder(specs[i])))
                    rep.results.append(Result(rep.subject.name, "runner", "contract.shape-finite", "error",
                                              message=f"ropespec error: the -j runner process {r.status()}"
                                                      f"{crash_words(r.output.text())}"))
                    publish()
                    continue
                kind = msg[0]
                if kind == "subject":
                    if i in slots:
                        slots[i].subject = msg[2]
                    else:
                        slots[i] = SubjectReport(msg[2])
                    publish()
                elif kind == "result":
                    slots[i].results.append(msg[2])
                    if on_result:
                        on_result(msg[2])
                elif kind == "progress":
                    if on_progress:
                        on_progress(*msg[2])
                elif kind == "done":
                    del busy[conn]
                    if on_subject:
                        on_subject(slots[i])
                    assign(r)
                elif kind == "target-error":
                    raise TargetError(msg[2])
                else:
                    raise RuntimeError(f"ropespec error while loading {specs[i]['name']}: {msg[2]}")
    finally:
        for r in runners:
            r.kill()
    return reports


def _placeholder(spec: dict) -> Subject:
    return Subject(name=spec["name"], target=str(spec["target"]), mode="unknown", array=spec.get("array", "numpy"),
                   dtype=spec.get("dtype") or "float32", max_position=spec.get("max_position") or 0)


def _shape_options(subject: Subject) -> list[str]:
    """The options that make ``ropespec check`` call TARGET as this subject was called: family, form, layout."""
    if subject.pipeline:
        return ["--form", subject.pipeline[0], "--table", subject.pipeline[1]]
    kind = {"decode": "rope", "attention-decode": "attention"}.get(subject.kind, subject.kind)
    out = ["--form", kind] if kind in ("table", "kernel", "qk") else [] if kind == "rope" else ["--family", kind]
    if subject.layout == "vllm":
        out += ["--form", "vllm"]
    elif subject.layout != "nd":
        out += ["--layout", subject.layout]
    return out + ["--inplace"] * subject.inplace


def replay_command(subject: Subject, result: Result) -> str | None:
    """A command line that runs exactly this failing case again (None unless it failed, and None for a callable that
    runs in-process: no other process can load it, so no command can; :func:`replay_text` says how to rerun it)."""
    if result.status != "fail" or subject.isolation.startswith("in-process"):
        return None
    parts = ["ropespec", "check", subject.target, "--array", subject.array, "--dtype", subject.dtype]
    if subject.expect is not None:
        parts += ["--expect", subject.expect.to_json()]
    else:
        parts += ["--max-position", str(subject.max_position)]
    parts += _shape_options(subject)
    parts += ["--invariant", property_id(result)]
    if result.profile:
        parts += ["--profile", result.profile]
    if result.seed is not None:
        parts += ["--seed", str(result.seed)]
    parts += result.replay
    return " ".join(shlex.quote(p) for p in parts)


def replay_text(subject: Subject, result: Result) -> str | None:
    """How to run exactly this failing case again: the command line, or, for a callable no command can load (a
    closure, a lambda, a function of __main__), the ropespec.check call that reruns it in the same process."""
    command = replay_command(subject, result)
    if command is not None or result.status != "fail":
        return command
    why = subject.isolation.removeprefix("in-process (").removesuffix(")")
    args = [subject.target.rpartition(".")[2] or "f"]
    if subject.expect is not None:
        args.append(repr(subject.expect.to_dict()))
    keywords = {"array": subject.array, "dtype": subject.dtype, "invariants": [property_id(result)],
                "seed": result.seed, "profile": result.profile}
    options = _shape_options(subject)  # the command line's shape options, as check()'s keywords
    i = 0
    while i < len(options):
        key = options[i].removeprefix("--")
        if key == "inplace":
            keywords["inplace"], i = True, i + 1
        else:
            keywords[key], i = options[i + 1], i + 2
    if subject.expect is None:
        keywords["max_position"] = subject.max_position
    if result.replay:
        keywords["replay"] = result.replay[1]
    call = ", ".join(args + [f"{k}={v!r}" for k, v in keywords.items() if v is not None])
    return f"no command can load it ({why}); in the same process: ropespec.check({call})"


@dataclass
class CheckResult:
    """What :func:`check` found: one report per implementation (and dtype) checked.

    ``passed`` is True only when at least one property ran on every implementation and every one held
    (``allow_skip``: an implementation on which everything was skipped does not count against it)."""

    reports: list[SubjectReport]
    seed: int
    profile: str
    allow_skip: bool = False
    explicit: bool = True  # False: the shipped set, where an implementation no selected invariant is about is left alone
    interrupted: str | None = None  # "interrupted" (Ctrl-C) or "terminated" (SIGTERM): the reports hold what finished
    error: str | None = None  # why the run stopped before it was done (a TARGET that does not load)

    @property
    def unchecked(self) -> list[SubjectReport]:
        """Implementations on which nothing was checked (every property skipped)."""
        return [rep for rep in self.reports if not rep.checked and (self.explicit or rep.relevant)]

    @property
    def held(self) -> bool:
        """Every property that ran held (nothing failed, nothing errored)."""
        return all(rep.passed for rep in self.reports)

    @property
    def passed(self) -> bool:
        """The one rule for "passed": every exit of the command line and every report says this."""
        return self.exit_code == 0

    @property
    def exit_code(self) -> int:
        """1 when an invariant failed; 2 when the run stopped on bad input or nothing was checked on an
        implementation (unless ``allow_skip``); 0 when something was checked on every implementation and all of it
        held. An interrupted run is never 0 (the command line exits 130 or 143)."""
        if not self.held:
            return 1
        if self.error or not self.reports or (self.unchecked and not self.allow_skip):
            return 2
        return 130 if self.interrupted else 0

    @property
    def finished(self) -> int:
        """The checks that finished (the properties that ran or were skipped, on every implementation)."""
        return sum(1 for rep in self.reports for r in rep.results if r.applicable)

    def nothing_checked(self) -> list[str]:
        """One line per implementation on which nothing was checked, with why."""
        return [f"nothing was checked on {rep.subject.name}: {rep.why_unchecked()}" for rep in self.unchecked]

    @property
    def results(self) -> list[Result]:
        """Every property's result: invariant, status, diagnosis, message, worst, counterexample."""
        return [r for rep in self.reports for r in rep.results]

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if r.status in ("fail", "error")]

    def report(self) -> str:
        """The report the command line prints, as plain text."""
        import io

        from rich.console import Console

        from ropespec import report

        buf = io.StringIO()
        report.render(self.reports, Console(file=buf, soft_wrap=True, force_terminal=False, width=160, emoji=False),
                      seed=self.seed, profile=self.profile)
        if not self.allow_skip:
            for line in self.nothing_checked():
                buf.write(line + "\n")
        return buf.getvalue()

    def raise_for_failures(self) -> None:
        """One AssertionError whose message is the whole report, every failing invariant listed (also
        when nothing was checked on an implementation, unless ``allow_skip``)."""
        __tracebackhide__ = True
        if not self.passed:
            raise AssertionError(self.report())

    def to_json(self) -> dict:
        from ropespec import report

        return report.to_json(self)


def check(
    fn,
    expect=None,
    *,
    array: str | None = None,
    dtype: str | None = None,
    max_position: int | None = None,
    profile: str | None = None,
    seed: int | None = None,
    invariants: list[str] | None = None,
    timeout: float | None = 10.0,
    warmup_timeout: float | None = 300.0,
    device: str = "cpu",
    family: str = "rope",
    allow_skip: bool = False,
    isolate: bool | None = None,
    form: str = "apply",
    layout: str = "nd",
    inplace: bool = False,
    table=None,
    memory_limit=None,
    replay: str | None = None,
) -> CheckResult:
    """Check ``fn`` — a function f(x, positions), a factory make(expect), or a TARGET string — against
    every invariant (or ``invariants``). ``expect`` is a preset name, a dict, JSON, a config.json path or
    an :class:`~spec.Expect`. The command line is a thin layer over this function.

    ``fn`` runs in a worker process of its own (a TARGET string, or a function its module names); a
    callable no other process can load (a lambda, a closure, a function defined in ``__main__``) runs
    in-process, and the report's header says so (``isolate=False`` forces in-process). ``timeout``:
    seconds per call; ``warmup_timeout``: seconds for the import, the factory and the first call. ``form``,
    ``layout``, ``inplace`` and ``table`` are the command line's --form, --layout, --inplace and --table (``table``: a
    TARGET string or the table builder itself); ``memory_limit`` is --memory-limit (bytes, or text such as "1GB"; 0:
    none; default: half the machine's memory); ``replay`` is --replay VERSION:BLOB, as a failure prints it."""
    import random

    from properties.profiles import DEFAULT_PROFILE
    from ropespec.inputs import build_subjects, call_shape, parse_expect, parse_replay

    blob = parse_replay(replay)
    subjects = build_subjects([fn], expect=parse_expect(expect), array=array, dtype=dtype,
                              max_position=max_position, device=device, timeout=timeout,
                              warmup_timeout=warmup_timeout, isolate=isolate, memory_limit=memory_limit,
                              **call_shape(family=family, form=form, layout=layout, inplace=inplace, table=table))
    profile = profile or DEFAULT_PROFILE
    seed = seed if seed is not None else random.randrange(2**31)
    reports = check_subjects(subjects, select_properties(invariants), profile=profile, seed=seed, replay=blob)
    return CheckResult(reports, seed, profile, allow_skip=allow_skip)


def fingerprint(fn, expect=None, *, array: str | None = None, dtype: str | None = None,
                max_position: int | None = None, device: str = "cpu", timeout: float | None = 10.0,
                warmup_timeout: float | None = 300.0, form: str = "apply", layout: str = "nd", inplace: bool = False,
                table=None, memory_limit=None):
    """Fingerprint ``fn`` (see :mod:`ropespec.fingerprints`); ``expect`` gives head_dim, dtype and the probe
    range. ``fn`` runs in its own worker process, as in :func:`check`; ``form``, ``layout``, ``inplace`` and
    ``table`` as there."""
    from ropespec.fingerprints import fingerprint as _fingerprint
    from ropespec.inputs import build_subjects, call_shape, parse_expect
    from spec import DEFAULT

    [subject] = build_subjects([fn], expect=parse_expect(expect) or DEFAULT, array=array, dtype=dtype,
                               max_position=max_position, device=device, timeout=timeout,
                               warmup_timeout=warmup_timeout, memory_limit=memory_limit,
                               **call_shape(form=form, layout=layout, inplace=inplace, table=table))
    try:
        return _fingerprint(subject.function(subject.expect), subject.expect)
    finally:
        subject.close()
