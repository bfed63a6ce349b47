"""A ``-j`` runner process: ``python -m ropespec.runner FD PARENT_PID``.

``ropespec check -j N`` starts N runners (:func:`ropespec.api.check_in_processes`). Each takes one
implementation at a time: it builds the subject (whose worker process is the runner's own child), runs
the properties, and streams every result back as it finishes, so an interrupted run still reports
what finished. A runner lives in its own session and ends when the main process dies.

Messages (main -> runner): ``("job", index, subject_kwargs, invariant_ids, profile, seed, replay)``.
Runner -> main: ``("subject", index, subject)``, ``("result", index, result)``, ``("done", index)``,
``("progress", index, (implementation, invariant, text, seconds))`` (how far a long property has got),
``("target-error", index, message)``, ``("error", index, message)``.
"""

from __future__ import annotations

import signal
import sys


def main(argv: list[str]) -> None:
    from multiprocessing.connection import Connection

    from implementations.worker import _watch_parent

    conn = Connection(int(argv[0]))
    _watch_parent(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from implementations import make_subject
    from implementations.contract import TargetError
    from properties import framework
    from properties.framework import run_property
    from ropespec.api import select_properties

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        _, index, kwargs, ids, profile, seed, replay = msg
        try:
            subject = make_subject(**kwargs)
        except TargetError as e:
            conn.send(("target-error", index, str(e)))
            continue
        except Exception as e:  # ropespec's own bug: said plainly
            conn.send(("error", index, f"{type(e).__name__}: {e}"))
            continue
        framework.PROGRESS = lambda *said, i=index: conn.send(("progress", i, said))
        try:
            conn.send(("subject", index, subject))
            for p in select_properties(ids):
                conn.send(("result", index, run_property(p, subject, profile=profile, seed_value=seed,
                                                          replay=replay)))
        finally:
            subject.close()
        conn.send(("subject", index, subject))  # again: now with its warm-up time and captured output
        conn.send(("done", index))


if __name__ == "__main__":
    main(sys.argv[1:])
