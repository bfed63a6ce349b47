"""Running checks: the engine behind ``ropespec check`` and the pytest plugin."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Callable

from implementations.contract import Subject
from properties.framework import Property, Result, all_properties, run_property


@dataclass
class SubjectReport:
    subject: Subject
    results: list[Result] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def to_json(self) -> dict:
        s = self.subject
        return {
            "name": s.name,
            "target": s.target,
            "mode": s.mode,
            "array": s.array,
            "dtype": s.dtype,
            "expect": s.expect.to_dict() if s.expect is not None else None,
            "passed": self.passed,
            "results": [r.to_json() | {"replay": replay_command(s, r)} for r in self.results],
        }


def select_properties(invariant_ids: list[str] | None = None) -> list[Property]:
    props = all_properties()
    if invariant_ids:
        known = {p.invariant for p in props}
        unknown = [i for i in invariant_ids if i not in known]
        if unknown:
            raise ValueError(f"--invariant: unknown {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        props = [p for p in props if p.invariant in invariant_ids]
    return props


def check_subjects(
    subjects: list[Subject],
    properties: list[Property],
    *,
    profile: str,
    seed: int,
    replay: tuple[str, str] | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> list[SubjectReport]:
    reports = []
    for s in subjects:
        rep = SubjectReport(s)
        for p in properties:
            r = run_property(p, s, profile=profile, seed_value=seed, replay=replay)
            rep.results.append(r)
            if on_result:
                on_result(r)
        reports.append(rep)
    return reports


def _check_one(job) -> list[Result]:
    """In a worker process: rebuild the subjects from the command line's arguments, check one."""
    from ropespec.inputs import build_subjects, parse_expect

    args, index, invariant_ids, seed, replay = job
    subjects = build_subjects(args["targets"], expect=parse_expect(args["expect"]), array=args["array"],
                              dtype=args["dtype"], max_position=args["max_position"], device=args["device"],
                              timeout=args["timeout"], kind=args["family"])
    props = select_properties(invariant_ids)
    return [run_property(p, subjects[index], profile=args["profile"], seed_value=seed, replay=replay) for p in props]


def check_in_processes(args, subjects, properties, *, seed, replay, jobs, on_result=None) -> list[SubjectReport]:
    """check_subjects spread over ``jobs`` processes, one implementation per task (``ropespec check -j``).
    Each worker loads the implementations itself: nothing but arguments and results crosses processes."""
    from concurrent.futures import ProcessPoolExecutor

    plain = {k: getattr(args, k) for k in ("targets", "expect", "array", "dtype", "max_position", "device",
                                           "timeout", "profile", "family")}
    ids = sorted({p.invariant for p in properties}) if args.invariant else None
    reports = [SubjectReport(s) for s in subjects]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_check_one, (plain, i, ids, seed, replay)) for i in range(len(subjects))]
        for rep, fut in zip(reports, futures):
            rep.results = fut.result()
            for r in rep.results:
                if on_result:
                    on_result(r)
    return reports


def replay_command(subject: Subject, result: Result) -> str | None:
    """A command line that runs exactly this failing case again (None unless it failed)."""
    if result.status != "fail":
        return None
    parts = ["ropespec", "check", subject.target, "--array", subject.array, "--dtype", subject.dtype]
    if subject.expect is not None:
        parts += ["--expect", subject.expect.to_json()]
    else:
        parts += ["--max-position", str(subject.max_position)]
    parts += ["--invariant", result.invariant]
    if result.profile:
        parts += ["--profile", result.profile]
    if result.seed is not None:
        parts += ["--seed", str(result.seed)]
    parts += result.replay
    return " ".join(shlex.quote(p) for p in parts)


@dataclass
class CheckResult:
    """What :func:`check` found: one report per implementation (and dtype) checked."""

    reports: list[SubjectReport]
    seed: int
    profile: str

    @property
    def passed(self) -> bool:
        return all(rep.passed for rep in self.reports)

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
        report.render(self.reports, Console(file=buf, soft_wrap=True, force_terminal=False, width=160),
                      seed=self.seed, profile=self.profile)
        return buf.getvalue()

    def raise_for_failures(self) -> None:
        """One AssertionError whose message is the whole report, every failing invariant listed."""
        __tracebackhide__ = True
        if not self.passed:
            raise AssertionError(self.report())

    def to_json(self) -> dict:
        from ropespec import report

        return report.to_json(self.reports, seed=self.seed, profile=self.profile)


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
    device: str = "cpu",
    family: str = "rope",
) -> CheckResult:
    """Check ``fn`` — a function f(x, positions), a factory make(expect), or a TARGET string — against
    every invariant (or ``invariants``). ``expect`` is a preset name, a dict, JSON, a config.json path or
    an :class:`~spec.Expect`. The command line is a thin layer over this function."""
    import random

    from properties.profiles import DEFAULT_PROFILE
    from ropespec.inputs import build_subjects, parse_expect

    subjects = build_subjects([fn], expect=parse_expect(expect), array=array, dtype=dtype,
                              max_position=max_position, device=device, timeout=timeout, kind=family)
    profile = profile or DEFAULT_PROFILE
    seed = seed if seed is not None else random.randrange(2**31)
    reports = check_subjects(subjects, select_properties(invariants), profile=profile, seed=seed)
    return CheckResult(reports, seed, profile)


def fingerprint(fn, expect=None, *, array: str | None = None, dtype: str | None = None,
                max_position: int | None = None, device: str = "cpu"):
    """Fingerprint ``fn`` (see :mod:`ropespec.fingerprint`); ``expect`` gives head_dim, dtype and the probe range."""
    from ropespec.fingerprint import fingerprint as _fingerprint
    from ropespec.inputs import build_subjects, parse_expect
    from spec import DEFAULT

    [subject] = build_subjects([fn], expect=parse_expect(expect) or DEFAULT, array=array, dtype=dtype,
                               max_position=max_position, device=device)
    return _fingerprint(subject.bind(subject.expect), subject.expect)
