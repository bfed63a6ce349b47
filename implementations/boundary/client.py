"""The parent's side of a host: the operations the properties call (:class:`HostClient`), answered by a worker
process (:class:`ropespec.implementations.boundary.workers.WorkerHost`) or, for a callable no other process can load,
in the caller's own process (:class:`InProcessHost`)."""

from __future__ import annotations

import time
from typing import Callable

from ropespec.implementations.boundary.host import Host, Watchdog, load_target
from ropespec.implementations.contract import timeout_scale
from ropespec.implementations.families import form_of
from ropespec.implementations.shape import CallShape
from ropespec.spec.expectation import Expect


class HostClient:
    """What an implementation's :class:`~ropespec.implementations.contract.Implementation` holds: the one interface of
    both hosts (the worker process's, :class:`ropespec.implementations.boundary.workers.WorkerHost`, and :class:`InProcessHost`):
    ``load(dtype)``, ``bind(hid, expect, fresh)``, ``op(hid, name, *args)``, ``drop(hid)``, ``close()``, and what they learned:
    ``warmup_seconds``, ``output``, ``left_behind``."""

    def __init__(self, target, label: str, *, shape: CallShape, array: str, device: str, timeout: float | None,
                 warmup_timeout: float | None, memory_limit: int | None = None):
        self.target = target
        self.label = label
        self.shape = shape
        self.array = array
        self.device = device
        self.timeout = timeout
        self.warmup_timeout = warmup_timeout
        self.memory_limit = memory_limit  # bytes of data the worker may hold (None: no limit)
        self.warmup_seconds: float | None = None
        self.output = None
        self.left_behind: list[str] = []  # processes the code under test left running, stopped with its worker

    def says(self, op: str) -> str:
        """How an operation's call reads in a message."""
        return form_of(self.shape).says(op)


class InProcessHost(HostClient):
    """A Host in the caller's own process (for callables no other process can load); its timeouts are a daemon
    thread's, and no memory limit applies."""

    def __init__(self, obj: Callable, label: str, *, why: str, **kwargs):
        super().__init__(obj, label, **kwargs)
        self.why = why
        self.watchdog = Watchdog(self.timeout)
        self.host: Host | None = None

    def load(self, dtype: str) -> dict:
        self.host, info = load_target(self.target, self.shape, self.label, self.array, dtype, self.device,
                                      in_worker=False)
        return info

    def bind(self, hid: int, expect: Expect, fresh: bool = False) -> dict:
        budget = self.warmup_timeout if self.warmup_seconds is None else self.watchdog.timeout
        return self._run("factory", lambda: self.host.bind(hid, expect), budget)

    def warmup_verdict(self, hid: int) -> dict:
        """The warm-up call, once, on its own budget: what it says of TARGET as a whole (Host.warmup); {} after."""
        if self.warmup_seconds is not None:
            return {}
        t0 = time.perf_counter()
        said = self._run("the warm-up call", lambda: self.host.warmup(hid), self.warmup_timeout)
        self.warmup_seconds = time.perf_counter() - t0
        return said

    def drop(self, hid: int) -> None:
        self.host.drop(hid)

    def op(self, hid: int, name: str, *args):
        self.warmup_verdict(hid)
        budget = self.watchdog.timeout and self.watchdog.timeout * timeout_scale(args)  # a long call: its rows' time
        return self._run(self.says(name), lambda: self.host.op(hid, name, args), budget)

    def _run(self, what: str, fn, budget: float | None):
        saved, self.watchdog.timeout = self.watchdog.timeout, budget
        try:
            return self.watchdog.run(what, fn)
        finally:
            self.watchdog.timeout = saved

    def close(self) -> None:
        pass
