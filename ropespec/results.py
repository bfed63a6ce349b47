"""What a check found: one report per implementation, and the run's result, whose one rule says "passed"."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from rich.console import Console

from ropespec.implementations.implementation import Implementation
from ropespec.properties.results import Result
from ropespec import formats, report
from ropespec.replay import replay_command


#: statuses that mean a property really ran on the implementation
RAN = ("pass", "fail", "error", "xfail")


@dataclass
class ImplementationReport:
    impl: Implementation
    results: list[Result] = field(default_factory=list)
    #: its JSON entry as an earlier report wrote it (a run resumed from that report: --resume), or None
    stored: dict | None = None

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
        """Why nothing ran, in one clause: the implementation's skip reason or its properties' (distinct) ones."""
        if self.impl.skip_reason:
            return self.impl.skip_reason
        reasons = list(dict.fromkeys(r.message for r in self.results if r.applicable and r.message))
        if not reasons:
            return "no property applies to it"
        return "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more reasons)" if len(reasons) > 3 else "")

    def to_json(self) -> dict:
        if self.stored is not None:
            return self.stored
        s = self.impl
        out = s.output()
        return {
            "name": s.name,
            "target": s.target,
            "mode": s.mode,
            "array": s.array,
            "dtype": s.dtype,
            "max_position": s.max_position,
            "device": s.device,
            "expect": s.expect.to_dict() if s.expect is not None else None,
            "configuration": s.configuration,
            "isolation": s.isolation,
            "notes": list(s.notes),
            "warmup_seconds": s.warmup_seconds,
            "output": out.to_json() if out is not None and out.total else None,
            "left_behind": list(s.left_behind),
            "checked": self.checked,
            "passed": self.passed,
            "results": [r.to_json() | {"replay": replay_command(s, r)} for r in self.results],
        }


@dataclass
class CheckResult:
    """What :func:`check` found: one report per implementation (and dtype) checked.

    ``passed`` is True only when at least one property ran on every implementation and every one held
    (``allow_skip``: an implementation on which everything was skipped does not count against it)."""

    reports: list[ImplementationReport]
    seed: int
    profile: str
    allow_skip: bool = False
    explicit: bool = True  # False: the shipped set, where an implementation no selected invariant is about is left alone
    interrupted: str | None = None  # "interrupted" (Ctrl-C) or "terminated" (SIGTERM): the reports hold what finished
    error: str | None = None  # why the run stopped before it was done (a TARGET that does not load)
    resumed_from: str | None = None  # the report whose held implementations this run kept (--resume)
    stopped: str | None = None  # why the run stopped before checking every implementation (--maxfail, -x)
    request: object | None = None  # what was asked (ropespec.request.CheckRequest), its seed the run's

    @property
    def unchecked(self) -> list[ImplementationReport]:
        """Implementations on which nothing was checked (every property skipped). In a configuration matrix a
        combination the TARGET declines is a skip with its reason: only a TARGET checked in none of its
        combinations counts."""
        checked_targets = {rep.impl.target for rep in self.reports if rep.checked}
        return [rep for rep in self.reports if not rep.checked and (self.explicit or rep.relevant)
                and not (rep.impl.configuration is not None and rep.impl.target in checked_targets)]

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
        return [f"nothing was checked on {rep.impl.name}: {rep.why_unchecked()}" for rep in self.unchecked]

    @property
    def results(self) -> list[Result]:
        """Every property's result: invariant, status, diagnosis, message, worst, counterexample."""
        return [r for rep in self.reports for r in rep.results]

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if r.status in ("fail", "error")]

    def headline(self) -> str:
        """The verdict in one line, the fault first: "[word] invariant on implementation" of the first failure (its
        root cause's, where it has one), how many more fail; else what stopped or emptied the run."""
        failures = [(rep, r) for rep in self.reports for r in rep.results if r.status in ("fail", "error")]
        if failures:
            failures.sort(key=lambda item: report.failure_order(*item))
            rep, r = failures[0]
            word = f"[{r.diagnosis}] " if r.status == "fail" and r.diagnosis else "error: " if r.status == "error" else ""
            more = f" (and {len(failures) - 1} more failing)" if len(failures) > 1 else ""
            return f"{word}{r.invariant} on {rep.impl.name}{more}"
        if self.error:
            return self.error
        if self.unchecked:
            return "; ".join(self.nothing_checked())
        return f"every check held ({self.finished} on {len(self.reports)} implementations)"

    def report(self) -> str:
        """The report the command line prints, as plain text."""
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
        return formats.to_json(self)


