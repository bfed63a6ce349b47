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
