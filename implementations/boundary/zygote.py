"""The fork server: ``python -m ropespec.implementations.boundary.zygote FD PARENT_PID``.

A fresh worker per implementation would pay for its imports every time (torch about 1.3 s,
transformers about 4 s). The zygote is a clean, single-threaded process that has imported the
installed libraries earlier workers needed (never a TARGET's own module, never any call of the
code under test) and forks a new worker on request: each worker starts from that clean template, in
its own session, with nothing of any other implementation in it.

Messages (parent -> zygote) are :mod:`ropespec.implementations.boundary.messages`' records, answered with ``Ok(value)`` or
``Refused(message)``: ``Preload(names)`` imports them (failures ignored; refused once the zygote has a thread
beyond numpy's OpenBLAS pool, since forking a threaded process is unsafe); ``Fork()`` followed by two file
descriptors (the worker's channel and its output pipe) forks a worker and answers its pid; ``Wait(pid, seconds)``
reaps it and answers ``[status, peak resident bytes]``, the status as Popen gives it (negative: killed by that
signal), or None while it still runs; ``Collect()`` reaps whatever else ended below it (it is the subreaper of what
a dead worker left).
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle

from ropespec.implementations.boundary.messages import Collect, Fork, Ok, Preload, Refused, Wait
from ropespec.implementations.boundary.worker import become_subreaper, reap, serve  # the worker's code, ready in every fork


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def main(argv: list[str]) -> None:
    conn = Connection(int(argv[0]))
    parent = int(argv[1])
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    if os.getppid() != parent:
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    become_subreaper()  # what a worker that died left running stays below this process, and ends with it
    import numpy  # noqa: F401

    # numpy's OpenBLAS starts its thread pool at import and makes it fork-safe itself (pthread_atfork);
    # what must not grow is anything beyond it
    baseline = _threads()
    ended: dict[int, tuple[int, int]] = {}  # pid -> (status, peak bytes) of children reaped before asked about

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if isinstance(msg, Preload):
            if _threads() > baseline:
                conn.send(Refused("the fork server has started a thread"))
                continue
            done = []
            for name in msg.names:
                try:
                    __import__(name)
                    done.append(name)
                except BaseException:  # a library that will not import here is simply not preloaded
                    pass
            conn.send(Ok(len(done)) if _threads() <= baseline else Refused("a preloaded library started a thread"))
        elif isinstance(msg, Fork):
            channel, output = recv_handle(conn), recv_handle(conn)
            pid = os.fork()
            if pid == 0:  # the worker
                try:
                    os.setsid()
                    os.dup2(output, 1)
                    os.dup2(output, 2)
                    os.close(output)
                    conn.close()
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    serve(Connection(channel), parent)  # it watches ropespec itself, not this template
                finally:
                    os._exit(0)
            os.close(channel)
            os.close(output)
            conn.send(Ok(pid))
        elif isinstance(msg, Collect):  # reap what ended below it (before it is stopped itself)
            conn.send(Ok(None))
        elif isinstance(msg, Wait):
            reaped = ended.pop(msg.pid, None) or reap(msg.pid, msg.seconds)
            conn.send(Ok(None if reaped is None else list(reaped)))
        else:
            conn.send(Refused(f"unknown message {msg!r}"))
        _collect(ended)  # what dead workers left (this is their subreaper) is reaped here, not left as zombies


def _collect(ended: dict) -> None:
    """Reap every child that has ended, keeping each one's status for a later "wait"."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        ended[pid] = (code, usage.ru_maxrss * 1024)


if __name__ == "__main__":
    main(sys.argv[1:])
