"""A ``-j`` runner process: ``python -m ropespec.runner FD PARENT_PID``.

``ropespec check -j N`` starts N runners (:func:`ropespec.scheduler.check_in_processes`). Each takes one
implementation at a time: it builds the implementation (whose worker process is the runner's own child), runs the
properties, and streams every result back as it finishes, so an interrupted run still reports what finished. A
runner lives in its own session and ends when the main process dies.

Messages are :mod:`implementations.messages`' records: a :class:`Job` in, then :class:`Loaded`, one
:class:`Finished` per property, :class:`Progress` (how far a long property has got) and :class:`Done` back, or
:class:`JobFailed`.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection

from implementations.contract import TargetError
from implementations.loader import load_implementation
from implementations.messages import Done, Finished, JobFailed, Loaded, Progress
from implementations.worker import watch_parent
from properties.framework import run_property
from ropespec.engine import select_properties


def main(argv: list[str]) -> None:
    conn = Connection(int(argv[0]))
    watch_parent(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            impl = load_implementation(**job.spec)
        except TargetError as e:
            conn.send(JobFailed(job.index, str(e), target_error=True))
            continue
        except Exception as e:  # ropespec's own bug: said plainly
            conn.send(JobFailed(job.index, f"{type(e).__name__}: {e}", target_error=False))
            continue
        tell = lambda *said, i=job.index: conn.send(Progress(i, said))  # noqa: E731
        try:
            conn.send(Loaded(job.index, impl))
            for p in select_properties(job.invariants):
                conn.send(Finished(job.index, run_property(p, impl, profile=job.profile, seed_value=job.seed,
                                                           replay=job.replay, on_progress=tell)))
        finally:
            impl.close()
        conn.send(Loaded(job.index, impl))  # again: now with its warm-up time and captured output
        conn.send(Done(job.index))


if __name__ == "__main__":
    main(sys.argv[1:])
