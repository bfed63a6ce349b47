"""The -j scheduler: implementations spread over runner processes (:mod:`ropespec.runner`), one at a time each, the
results streaming back as typed messages (:mod:`implementations.messages`)."""

from __future__ import annotations

from collections import deque
from multiprocessing.connection import wait
from typing import Callable

from implementations.contract import TargetError
from implementations.implementation import Implementation
from implementations.isolation import Child, crash_words
from implementations.messages import Done, Finished, Job, JobFailed, Loaded, Progress
from properties.results import Result
from ropespec.results import ImplementationReport
from ropespec.signals import raise_if_signalled


def check_in_processes(
    specs: list[dict],
    invariant_ids: list[str] | None,
    *,
    profile: str,
    seed: int,
    replay: tuple[str, str] | None,
    jobs: int,
    on_result: Callable[[Result], None] | None = None,
    on_implementation: Callable[[ImplementationReport], None] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    into: list[ImplementationReport] | None = None,
) -> list[ImplementationReport]:
    """check_implementations spread over ``jobs`` runner processes (:mod:`ropespec.runner`), one implementation
    at a time each. ``specs`` are :func:`implementations.load_implementation` keyword arguments; each runner loads
    its implementation itself (in its own worker process). Results stream back as they finish; on
    Ctrl-C or SIGTERM (KeyboardInterrupt here) every runner is killed at once and ``into`` holds what
    finished. Raises TargetError when a TARGET does not load."""
    reports = into if into is not None else []
    slots: dict[int, ImplementationReport] = {}
    queue = deque(range(len(specs)))
    runners: list[Child] = []
    busy: dict = {}

    def publish():
        reports[:] = [slots[k] for k in sorted(slots)]

    def assign(r: Child) -> None:
        if queue:
            i = queue.popleft()
            r.send(Job(i, specs[i], invariant_ids, profile, seed, replay))
            busy[r.conn] = (r, i)

    try:
        runners = [Child("ropespec.runner") for _ in range(max(1, min(jobs, len(specs))))]
        for r in runners:
            assign(r)
        while busy:
            raise_if_signalled()
            for conn in wait(list(busy), timeout=0.5):
                r, i = busy[conn]
                try:
                    msg = conn.recv()
                except (EOFError, OSError):  # the runner itself died: ropespec's failure, said as an error
                    del busy[conn]
                    rep = slots.setdefault(i, ImplementationReport(_placeholder(specs[i])))
                    rep.results.append(Result(rep.impl.name, "runner", "contract.shape-finite", "error",
                                              message=f"ropespec error: the -j runner process {r.status()}"
                                                      f"{crash_words(r.output.text())}"))
                    publish()
                    continue
                if isinstance(msg, Loaded):
                    if i in slots:
                        slots[i].impl = msg.impl
                    else:
                        slots[i] = ImplementationReport(msg.impl)
                    publish()
                elif isinstance(msg, Finished):
                    slots[i].results.append(msg.result)
                    if on_result:
                        on_result(msg.result)
                elif isinstance(msg, Progress):
                    if on_progress:
                        on_progress(*msg.said)
                elif isinstance(msg, Done):
                    del busy[conn]
                    if on_implementation:
                        on_implementation(slots[i])
                    assign(r)
                elif isinstance(msg, JobFailed) and msg.target_error:
                    raise TargetError(msg.message)
                else:
                    raise RuntimeError(f"ropespec error while loading {specs[i]['name']}: {getattr(msg, 'message', msg)}")
    finally:
        for r in runners:
            r.kill()
    return reports


def _placeholder(spec: dict) -> Implementation:
    return Implementation(name=spec["name"], target=str(spec["target"]), mode="unknown", array=spec.get("array", "numpy"),
                   dtype=spec.get("dtype") or "float32", max_position=spec.get("max_position") or 0)


