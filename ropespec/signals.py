"""Ctrl-C and SIGTERM: stop the run at once, and stop it for sure.

A handler raises where Python happens to be, and Python drops an exception raised inside some callbacks (a garbage
collection callback of Hypothesis's prints "Exception ignored" and goes on): the signal is also remembered, and the
engine asks :func:`raise_if_signalled` between examples, so a run never carries on after a Ctrl-C it swallowed."""

from __future__ import annotations

import signal
import threading


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI runners and timeout(1) send): stop like Ctrl-C, exit 143."""


_received: list[type[KeyboardInterrupt]] = []


def _on_signal(signum, frame):
    kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
    _received.append(kind)
    raise kind()


def terminated(e: KeyboardInterrupt) -> bool:
    """Whether an interrupt stands for SIGTERM: its own type, or, where a library turned the exception our handler
    raised into a plain KeyboardInterrupt (Ray's blocking calls do), the signal remembered."""
    return isinstance(e, Terminated) or bool(_received) and _received[-1] is Terminated


def raise_if_signalled() -> None:
    """Raise the interrupt a signal asked for, if one arrived and was swallowed on its way."""
    if _received:
        raise _received[-1]()


class handled:
    """While the command runs, Ctrl-C and SIGTERM stop it (even when started in the background with SIGINT ignored);
    the caller's handlers come back afterwards. Only the main thread can install handlers: elsewhere, nothing."""

    def __enter__(self):
        self.saved = None
        _received.clear()
        if threading.current_thread() is threading.main_thread():
            self.saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
            signal.signal(signal.SIGINT, _on_signal)
            signal.signal(signal.SIGTERM, _on_signal)
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            signal.signal(signal.SIGINT, self.saved[0])
            signal.signal(signal.SIGTERM, self.saved[1])
        _received.clear()
        return False
