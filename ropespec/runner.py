"""A ``-j`` runner process: ``python -m ropespec.runner FD PARENT_PID``.

``ropespec check -j N`` starts N runners (:func:`ropespec.scheduler.check_in_processes`). Each takes one
implementation at a time: it builds the implementation (whose worker process is the runner's own child), runs the
properties, and streams every result back as it finishes, so an interrupted run still reports what finished. A
runner lives in its own session and ends when the main process dies.

Messages are :mod:`ropespec.implementations.boundary.messages`' records: a :class:`Job` in, then :class:`Loaded`, one
:class:`Finished` per property, :class:`Progress` (how far a long property has got) and :class:`Done` back, or
:class:`JobFailed`.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection
from typing import Callable, Iterator

from ropespec.implementations.contract import TargetError
from ropespec.implementations.boundary.messages import Done, Finished, Job, JobFailed, Loaded, Progress
from ropespec.implementations.boundary.worker import watch_parent
from ropespec.properties.framework import run_property
from ropespec.engine import select_properties


def run_job(job: Job, tell: Callable[[Progress], None]) -> Iterator:
    """One implementation's check as the messages that report it, in order: :class:`Loaded`, one :class:`Finished`
    per property, :class:`Loaded` again (now with its warm-up time and captured output) and :class:`Done`; or
    :class:`JobFailed`. ``tell`` gets each :class:`Progress` of a long property while it runs. The -j runner sends
    them down its pipe; a cluster task (:mod:`ropespec.cluster`) yields them."""
    try:
        impl = job.request.load()
    except TargetError as e:
        yield JobFailed(job.index, str(e), target_error=True)
        return
    except Exception as e:  # ropespec's own bug: said plainly
        yield JobFailed(job.index, f"{type(e).__name__}: {e}", target_error=False)
        return
    try:
        yield Loaded(job.index, impl)
        for p in select_properties(job.invariants):
            yield Finished(job.index, run_property(p, impl, profile=job.profile, seed_value=job.seed, replay=job.replay,
                                                   on_progress=lambda *said: tell(Progress(job.index, said))))
    finally:
        impl.close()
    yield Loaded(job.index, impl)
    yield Done(job.index)


def main(argv: list[str]) -> None:
    conn = Connection(int(argv[0]))
    watch_parent(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        for message in run_job(job, conn.send):
            conn.send(message)


if __name__ == "__main__":
    main(sys.argv[1:])
