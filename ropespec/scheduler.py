"""The -j scheduler: implementations spread over runner processes (:mod:`ropespec.runner`), one at a time each, the
results streaming back as typed messages (:mod:`ropespec.implementations.boundary.messages`)."""

from __future__ import annotations

import os

from collections import deque
from multiprocessing.connection import wait
from typing import Callable

from ropespec.implementations.contract import TargetError
from ropespec.implementations.loader import LoadRequest
from ropespec.implementations.boundary import threads
from ropespec.implementations.boundary.processes import Child, crash_words
from ropespec.implementations.boundary.messages import Done, Finished, Job, JobFailed, Loaded, Progress
from ropespec.properties.results import Result
from ropespec.request import CheckRequest
from ropespec.results import ImplementationReport
from ropespec.signals import raise_if_signalled


class Collector:
    """The reports of implementations checked elsewhere (a -j runner, a cluster task), built from the messages as they
    arrive and kept in the order of ``requests`` whatever the order they finish in. ``into`` holds what finished at every
    moment, so an interrupted run reports it."""

    def __init__(self, requests: list[LoadRequest], *, on_result=None, on_implementation=None, on_progress=None,
                 into: list[ImplementationReport] | None = None):
        self.requests = requests
        self.on_result, self.on_implementation, self.on_progress = on_result, on_implementation, on_progress
        self.reports = into if into is not None else []
        self.slots: dict[int, ImplementationReport] = {}
        self.notes: dict[int, list[str]] = {}  # said of an implementation in its report's header (a retry)

    def _publish(self) -> None:
        self.reports[:] = [self.slots[k] for k in sorted(self.slots)]

    def take(self, i: int, msg) -> bool:
        """One message of implementation ``i``'s job; True when the job is done. Raises TargetError when its TARGET
        does not load, RuntimeError on ropespec's own error."""
        if isinstance(msg, Loaded):
            for note in self.notes.get(i, ()):
                if note not in msg.impl.notes:
                    msg.impl.notes.append(note)
            if i in self.slots:
                self.slots[i].impl = msg.impl
            else:
                self.slots[i] = ImplementationReport(msg.impl)
            self._publish()
        elif isinstance(msg, Finished):
            self.slots[i].results.append(msg.result)
            if self.on_result:
                self.on_result(msg.result)
        elif isinstance(msg, Progress):
            if self.on_progress:
                self.on_progress(*msg.said)
        elif isinstance(msg, Done):
            if self.on_implementation:
                self.on_implementation(self.slots[i])
            return True
        elif isinstance(msg, JobFailed) and msg.target_error:
            raise TargetError(msg.message)
        else:
            raise RuntimeError(f"ropespec error while loading {self.requests[i].name}: {getattr(msg, 'message', msg)}")
        return False

    def lost(self, i: int, message: str) -> None:
        """Implementation ``i``'s job ended without a word (its process died): ropespec's failure, said as an error."""
        rep = self.slots.setdefault(i, ImplementationReport(self.requests[i].placeholder()))
        rep.results.append(Result(rep.impl.name, "runner", "contract.shape-finite", "error",
                                  message=f"ropespec error: {message}"))
        self._publish()
        if self.on_implementation:
            self.on_implementation(rep)

    def forget(self, i: int, note: str) -> list[Result]:
        """Drop what implementation ``i``'s job reported so far, before it runs again from the start (so no check
        counts twice); ``note`` says so in its report. The results dropped."""
        self.notes.setdefault(i, []).append(note)
        rep = self.slots.pop(i, None)
        self._publish()
        return rep.results if rep is not None else []


def job(i: int, request: LoadRequest, asked: CheckRequest) -> Job:
    """The message that asks a runner (or a cluster task) to check implementation ``i`` as ``asked`` says."""
    return Job(i, request, list(asked.invariants) or None, asked.profile, asked.seed, asked.replayed())


def check_in_processes(
    requests: list[LoadRequest],
    asked: CheckRequest,
    *,
    jobs: int,
    on_result: Callable[[Result], None] | None = None,
    on_implementation: Callable[[ImplementationReport], None] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    into: list[ImplementationReport] | None = None,
) -> list[ImplementationReport]:
    """check_implementations of the request ``asked`` (its invariants, profile, seed and replay; its seed the run's)
    spread over ``jobs`` runner processes (:mod:`ropespec.runner`), one implementation
    at a time each, each runner loading its implementation (a :class:`~ropespec.implementations.loader.LoadRequest`)
    itself (in its own worker process). Results stream back as they finish; on
    Ctrl-C or SIGTERM (KeyboardInterrupt here) every runner is killed at once and ``into`` holds what
    finished. Raises TargetError when a TARGET does not load."""
    collector = Collector(requests, on_result=on_result, on_implementation=on_implementation, on_progress=on_progress,
                          into=into)
    queue = deque(range(len(requests)))
    runners: list[Child] = []
    busy: dict = {}

    def assign(r: Child) -> None:
        if queue:
            i = queue.popleft()
            r.send(job(i, requests[i], asked))
            busy[r.conn] = (r, i)

    try:
        n = max(1, min(jobs, len(requests)))
        # each runner's workers size their thread pools to the cores the n runs share (boundary/threads.py)
        runners = [Child("ropespec.runner", env={**os.environ, threads.JOBS: str(n)}) for _ in range(n)]
        for r in runners:
            assign(r)
        while busy:
            raise_if_signalled()
            for conn in wait(list(busy), timeout=0.5):
                r, i = busy[conn]
                try:
                    msg = conn.recv()
                except (EOFError, OSError):  # the runner itself died
                    del busy[conn]
                    collector.lost(i, f"the -j runner process {r.status()}{crash_words(r.output.text())}")
                    continue
                if collector.take(i, msg):
                    del busy[conn]
                    assign(r)
    finally:
        for r in runners:
            r.kill()
    return collector.reports

