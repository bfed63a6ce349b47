"""``ropespec check``: every invariant on each implementation (default: the shipped ones), a verdict per invariant,
the word of each failure with its counterexample and replay, and the exit code of the whole run."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column

from ropespec.implementations.contract import TargetError
from ropespec.implementations.loader import LoadRequest
from ropespec import formats, report, resume, signals
from ropespec.cluster import Cluster, check_on_cluster
from ropespec.commands import lab
from ropespec.console import console as console_for, one_destination, say
from ropespec.engine import check_implementations
from ropespec.inputs import UsageError
from ropespec.request import CheckRequest, LabRequest
from ropespec.results import CheckResult
from ropespec.scheduler import check_in_processes

NAME = "check"

EXIT_CODES = """exit codes:
  0    at least one property ran on every implementation, and every one held
  1    an invariant failed (including crash and timeout)
  2    bad usage, a bad expectation, a TARGET that does not load, a report path that is an input or cannot be
       written, or nothing checked on an implementation (every property skipped: the line says why;
       --allow-skip accepts it)
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM): the report of what finished is printed, and the
       report files say "interrupted"

examples:
  ropespec check my_rope.py:apply --expect '{"head_dim": 128, "rope_theta": 500000}'
  ropespec check kernels.py:make --array torch --dtype bfloat16 --expect llama3.1-8b -j 2 --json r.json
"""

#: a property running this long is said to be running on stderr when the output is piped (once per property)
LONG_PROPERTY_S = 5.0
#: piped, a run that has printed nothing for this long says how far it has got (a heartbeat for CI logs)
HEARTBEAT_S = 60.0
#: the share of the run done before a time left is estimated from it: earlier, the first checks say too little
ESTIMATE_FROM = 0.2
#: the widest the progress label gets, so that on a wide terminal the bar sits after it, not at the far edge
LABEL_MAX = 60



def add(sub) -> None:
    CheckRequest.add_arguments(sub.add_parser(
        NAME, help="check implementations against every invariant",
        description="Check TARGETs (default: the shipped implementations) against every invariant. Each TARGET runs in "
                    "a worker process of its own: a crash, a hang or an exit of the code under test is a verdict "
                    "(crash, timeout), never the end of the run.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter))


def run(req: CheckRequest, console: Console) -> int:
    if req.module:
        return lab.run(LabRequest.of(req), console)
    configurations = req.configurations()
    outs = req.outputs(**{"--json": req.json, "--junit": req.junit})
    if outs.to_stdout:  # standard output carries the report file: the text goes to standard error
        console = console_for(to_stderr=True)
    props = req.properties()
    replay = req.replayed()
    resumed = resume.read(req.resume, req) if req.resume else None
    notes: list[str] = []
    requests = req.load_requests(configurations, notes)
    held = resumed.held(requests, props) if resumed else {}
    todo = [s for i, s in enumerate(requests) if i not in held]
    if resumed:
        notes.append(f"resumed from {req.resume}: {len(held)} of {len(requests)} implementations held there, "
                     f"{len(todo)} checked now (seed {resumed.seed})")
    jobs = req.jobs if req.force_jobs else max(1, min(req.jobs, len(todo), os.cpu_count() or 1))
    if jobs < req.jobs and not req.cluster:
        notes.append(f"checked in {jobs} process{'es' * (jobs > 1)} (-j {req.jobs} capped at the number of "
                     f"implementations and of cores; --force-jobs uses {req.jobs})")
    seed = resumed.seed if resumed else req.seed if req.seed is not None else random.randrange(2**31)
    with contextlib.ExitStack() as stack:
        cluster = None
        if req.cluster:  # connected (or started) before any report is cleared: a bad address is one line, exit 2
            cluster = stack.enter_context(Cluster(req.cluster))
            notes.append(cluster.describe() + (f"; -j {req.jobs} does not apply: Ray places the tasks"
                                                if req.jobs > 1 else ""))
        outs.clear()  # from here on a report path holds this run's report or nothing
        result = _run(req, todo, props, seed, replay, jobs, console, cluster)
    if resumed:
        result.reports, result.resumed_from = _merged(requests, held, result.reports), req.resume
    return _finish(req, result, outs, notes, console)


def _merged(requests: list[LoadRequest], held: dict, checked: list) -> list:
    """A resumed run's reports in the command's order: those the earlier report held, and those checked now (matched
    by name, in order: a TARGET given twice has two)."""
    fresh: dict = {}
    for rep in checked:
        fresh.setdefault(rep.impl.name, []).append(rep)
    out = []
    for i, request in enumerate(requests):
        if i in held:
            out.append(held[i])
        elif fresh.get(request.name):
            out.append(fresh[request.name].pop(0))
    return out


def _run(req: CheckRequest, requests, props, seed, replay, jobs, console: Console, cluster=None) -> CheckResult:
    """Check every implementation, with a progress display; what finished, however the run ended."""
    reports: list = []
    interrupted = error = stopped = None
    done: list = []  # the implementations finished, in the order they finished

    def finished(rep) -> None:
        display.finished(rep)
        done.append(rep)
        failing = sum(not r.passed for r in done)
        if req.maxfail is not None and failing >= req.maxfail and len(done) < len(requests):
            raise _Enough(failing)

    with _Display(console, total=len(requests) * len(props), implementations=len(requests),
                  parallel=cluster is not None or jobs > 1) as display:
        shown = dict(on_result=display.advance, on_implementation=finished, on_progress=display.running_now,
                     into=reports)
        asked = req.replace(seed=seed)  # what each implementation's process is asked: the run's seed
        try:
            if cluster is not None:
                check_on_cluster(cluster, requests, asked, on_forget=display.forget, **shown)
            elif jobs > 1:
                check_in_processes(requests, asked, jobs=jobs, **shown)
            else:  # each implementation is loaded just before it is checked, and stopped after
                check_implementations(_loaded(requests, req.allow_skip), props, profile=req.profile, seed=seed,
                                      replay=replay, **shown)
        except TargetError as e:
            error = f"TARGET {e}"
        except UsageError as e:
            error = str(e)
        except KeyboardInterrupt as e:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the report short
            interrupted = "terminated" if signals.terminated(e) else "interrupted"
        except _Enough as e:  # the report holds the implementations that finished; the others were not checked
            reports[:] = [rep for rep in reports if any(rep is d for d in done)]
            left = len(requests) - len(reports)
            said = "-x, --maxfail 1" if req.maxfail == 1 else f"--maxfail {req.maxfail}"
            stopped = (f"stopped after {e.failing} failing implementation{'s' * (e.failing > 1)} ({said}): {left} of "
                       f"{len(requests)} implementations not checked")
    return CheckResult(reports, seed, req.profile, allow_skip=req.allow_skip, explicit=bool(req.targets),
                       interrupted=interrupted, error=error, stopped=stopped, request=req.replace(seed=seed))


class _Enough(Exception):
    """--maxfail's count of failing implementations reached, with implementations still to check: the run stops (the
    serial loop, the -j runners and the cluster's tasks all end theirs on any exception)."""

    def __init__(self, failing: int):
        super().__init__(failing)
        self.failing = failing


def _finish(req: CheckRequest, result: CheckResult, outs, notes: list[str], console: Console) -> int:
    """The report files first: whatever then happens to the terminal (a closed pipe, a Ctrl-C), they are whole; a
    run that stopped before anything was checked (the first TARGET does not load) leaves none. Then the text, and
    the exit code."""
    unwritten = [] if result.error is not None and not result.reports else [
        w for w in (outs.write("--json", formats.json_text(result)), outs.write("--junit", formats.junit_text(result)))
        if w]
    for note in notes:
        say(console, note)
    ended = result.stopped or (f"{result.interrupted} before the run ended: the report holds the checks that "
                               f"finished" if result.interrupted else None)
    if result.reports or result.error is None:  # a first TARGET that does not load: its one line says it all
        report.render(result.reports, console, seed=result.seed, profile=result.profile,
                      values=f"in {req.json}" if outs.get("--json") else "rerun with --json PATH", ended=ended)
    for line in unwritten:
        print(f"ropespec: error: {line}", file=sys.stderr)
    if result.stopped is not None:
        print(f"ropespec: {result.stopped}", file=sys.stderr)
    if result.interrupted is not None:
        print(f"ropespec: {result.interrupted}: the report above holds the {report.count(result.finished, 'check')} "
              f"that finished", file=sys.stderr)
        return 143 if result.interrupted == "terminated" else 130
    if result.error is not None:
        print(f"ropespec: error: {result.error}", file=sys.stderr)
        return 2
    code = result.exit_code
    if code == 2:
        for line in result.nothing_checked() or ["nothing was checked"]:
            print(f"ropespec: error: {line} (--allow-skip accepts this)", file=sys.stderr)
    return 2 if unwritten else code


class _Display:
    """How far the run has got, across every check of every implementation (a whole configuration matrix): on a
    terminal a progress bar with the checks done, failed and (when several run at once) running, and the time left;
    piped (CI logs), a line on stderr per implementation as it finishes (with how many are done and the time left when
    there are several), one for a property still running after LONG_PROPERTY_S seconds (once per property), and a
    heartbeat when nothing was printed for HEARTBEAT_S. The time left is the time so far scaled by the share of the run
    still to do, said once ESTIMATE_FROM of it is done."""

    def __init__(self, console: Console, total: int, implementations: int = 1, parallel: bool = False):
        self.piped = not console.is_terminal
        # the report and standard error reach one place (2>&1): an implementation's counts are the report's to say,
        # below; what only standard error says (a property still running, the heartbeat) is said as before
        self.counted_below = self.piped and one_destination(console)
        self.said: set = set()
        self.printed = time.monotonic()
        self.implementations, self.parallel = implementations, parallel
        self.checks = self.failed = self.done = 0
        self.running: set[str] = set()
        # what runs, cut to fit (an ellipsis), before the bar, the checks done and the times, which always show; the
        # bar moves over every (implementation, property) pair, the count is of the checks that ran, as the report's
        # on a terminal wide enough the label takes LABEL_MAX columns and the bar sits after it; on a narrower one it
        # takes what the bar, the counts and the times leave (about 45 columns), cut with an ellipsis
        wide = console.width > LABEL_MAX + 45
        label = Column(no_wrap=True, overflow="ellipsis", min_width=LABEL_MAX if wide else 8,
                       max_width=LABEL_MAX if wide else None, ratio=None if wide else 1)
        self.bar = Progress(TextColumn("{task.description}", table_column=label),
                            BarColumn(bar_width=10), TextColumn("{task.fields[checks]}", table_column=Column(no_wrap=True)),
                            TimeElapsedColumn(), TextColumn("{task.fields[left]}", table_column=Column(no_wrap=True)),
                            console=console, transient=True, disable=self.piped, expand=not wide)
        self.task = self.bar.add_task("checking", total=total, checks="0 checks", left="")

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def _counts(self) -> str:
        text = f"{self.checks} check{'s' * (self.checks != 1)}"
        if self.failed:
            text += f", {self.failed} failed"
        if self.parallel and self.running:
            text += f", {len(self.running)} running"
        return text

    def left(self) -> str:
        """"~M:SS left" once ESTIMATE_FROM of the run is done, else nothing."""
        task = self.bar.tasks[0]
        share = task.completed / task.total if task.total else 0.0
        if not ESTIMATE_FROM <= share < 1 or not task.elapsed:
            return ""
        seconds = round(task.elapsed * (1 - share) / share)
        return f"~{seconds // 60}:{seconds % 60:02d} left"

    def advance(self, r) -> None:
        self.bar.update(self.task, advance=1)
        if not r.applicable:  # a property made for another kind of implementation: no check, nothing to name
            self.bar.update(self.task, left=self.left())
            return
        self.checks += 1
        self.failed += r.status in ("fail", "error")
        self.running.add(r.implementation)
        self.bar.update(self.task, description=f"{r.invariant} ({r.implementation})", checks=self._counts(),
                        left=self.left())

    def forget(self, results) -> None:
        """An attempt that was lost and runs again: its checks are undone here as in the report."""
        ran = [r for r in results if r.applicable]
        self.checks -= len(ran)
        self.failed -= sum(r.status in ("fail", "error") for r in ran)
        self.bar.update(self.task, advance=-len(results), checks=self._counts())

    def finished(self, rep) -> None:
        self.done += 1
        self.running.discard(rep.impl.name)
        self.bar.update(self.task, checks=self._counts())
        if self.piped and not self.counted_below:
            where = ""
            if self.implementations > 1:
                left = self.left()
                where = f" ({self.done} of {self.implementations} done" + (f", {left}" if left else "") + ")"
            self._say(f"ropespec: {rep.impl.name}: {report.counts_text(rep.results)}{where}")

    def _say(self, line: str) -> None:
        print(line, file=sys.stderr, flush=True)
        self.printed = time.monotonic()

    def running_now(self, implementation: str, invariant: str, text: str, seconds: float) -> None:
        self.running.add(implementation)
        if not self.piped:  # what is running and how far first: a narrow terminal cuts the end of the line
            self.bar.update(self.task, description=f"{invariant}: {text} ({implementation})", checks=self._counts(),
                            left=self.left())
            return
        key = (implementation, invariant)
        if seconds >= LONG_PROPERTY_S and key not in self.said:
            self.said.add(key)
            self._say(f"ropespec: {implementation}: {invariant} still running after {seconds:.0f} s ({text})")
        elif time.monotonic() - self.printed >= HEARTBEAT_S:
            left = self.left()
            task = self.bar.tasks[0]  # every (implementation, property) pair: the share the time left is taken from
            self._say(f"ropespec: still running: {int(task.completed)} of {int(task.total)} done ({self._counts()})"
                      + (f", {left}" if left else "") + f"; now {invariant} on {implementation} ({text})")


def _loaded(requests: list[LoadRequest], allow_skip: bool):
    """The implementations, loaded one at a time. One that cannot run here at all (numpy asked for bfloat16, no
    CUDA, a factory declining the expectation) is bad usage before it runs (exit 2); in a configuration matrix a
    combination it declines is a skip with its reason (the run's verdict asks only that each TARGET be checked in
    some combination)."""
    for request in requests:
        s = request.load()
        if s.skip_reason and not allow_skip and s.configuration is None:
            raise UsageError(f"nothing can be checked on {s.name}: {s.skip_reason} (--allow-skip accepts this)")
        yield s
