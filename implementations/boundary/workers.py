"""The process boundary: the implementation under test runs in a worker process that ropespec owns.

:class:`Child` is a Python process of ropespec's: its own session (the terminal's Ctrl-C goes to
ropespec, which stops its children), a message channel, its standard output and error captured
(:class:`Captured`: the first and last 4 KiB, and how much was cut between), killed with its whole
process group, and ending by itself when its parent dies.

:class:`WorkerHost` is the parent's side of one implementation's worker (``ropespec.implementations.boundary.worker``).
It keeps the deadline of every request. When a call runs past it, the worker is killed and the call
is a ``timeout``; when the worker dies (a segfault, ``os._exit``, an abort), the call is a ``crash``
with the exit status or signal and the last lines the worker printed. Either way the next request
starts a fresh worker, rebuilds the factory's functions, and goes on, so every other invariant really
runs.

Timeouts: loading the TARGET, the factory calls before the first call, and a warm-up call that
ropespec makes before the first timed call (two rows at positions 0 and 1) are a worker's *warm-up*
(imports, JIT compilation, autotuning) and get ``warmup_timeout`` (default 300 s); every other
request gets ``timeout`` (default 10 s). A warm-up in a restarted worker gets three times the first
warm-up plus ``timeout``, at most ``warmup_timeout``; once a warm-up has run past its budget, later
warm-ups get ``timeout``. The first warm-up's duration is reported.

At most :data:`MAX_LIVE` workers are alive in one process: the least recently used one is stopped
(and restarted when it is used again) before another starts. A worker ends with its implementation: once nothing
refers to the WorkerHost any more (an Implementation dropped without ``close()``), its worker process is stopped,
so that idle workers do not accumulate under a long test run.
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from collections import OrderedDict

from ropespec.implementations import triton_mode
from ropespec.implementations.boundary import threads
from ropespec.implementations.boundary.client import HostClient
from ropespec.implementations.boundary.messages import Bind, CallModule, Drop, Load, Operate, Stop, Warmup, unwrap
from ropespec.implementations.boundary.processes import Captured, Child, Died, TimedOut, _preload, crash_words
from ropespec.implementations.contract import OUT_OF_MEMORY, Fault, killed_for_memory, timeout_scale
from ropespec.spec.expectation import Expect


#: workers alive at once in one process
MAX_LIVE = int(os.environ.get("ROPESPEC_MAX_WORKERS", "32"))


#: seconds a worker has to end what its code under test left running before it is killed itself
STOP_BUDGET = 3.0


#: the hosts with a live worker, least recently used first; held weakly, so that a host nothing else refers to is
#: collected and its worker stopped (:func:`_end_worker`)
_LIVE: "OrderedDict[int, weakref.ref[WorkerHost]]" = OrderedDict()


def _touch(host: "WorkerHost") -> None:
    _LIVE[id(host)] = weakref.ref(host)
    _LIVE.move_to_end(id(host))


def _make_room() -> None:
    while len(_LIVE) >= MAX_LIVE:
        _, ref = _LIVE.popitem(last=False)
        oldest = ref()
        if oldest is not None:
            oldest.stop()


def _end_worker(child: "Child", key: int) -> None:
    """A dropped host's worker, and what it started: killed (no one is left to read what a stop would report)."""
    _LIVE.pop(key, None)
    try:
        child.kill()
    except Exception:
        pass


class WorkerHost(HostClient):
    """The parent's side of one implementation's worker process (see the module docstring)."""

    def __init__(self, ref: dict, label: str, **kwargs):
        super().__init__(ref, label, **kwargs)
        self.output = Captured()
        self.dtype = "float32"
        self.child: Child | None = None
        self.binds: dict[int, dict] = {}  # handle -> the expectation it was built for (rebuilt after a restart)
        self.fresh: set[int] = set()  # handles of stateful decoders (lost with their worker)
        self.live: set[int] = set()  # handles built in the current worker
        self.warm = False
        self.warmup_overran = False
        self.stopped_by: str | None = None  # why the last worker ended (a fault's word)
        self.restarts = 0
        self._started = 0.0
        self.pending = False  # a request was sent and its reply not read

    # budgets ------------------------------------------------------------------------------------
    def _budget(self) -> tuple[float | None, str]:
        if self.warm:
            return self.timeout, "--timeout"
        if self.warmup_overran:
            return self.timeout, "--timeout, after an earlier warm-up ran past --warmup-timeout"
        if self.warmup_seconds is not None:  # a restarted worker: what the first warm-up needed, and more
            limit = 3 * self.warmup_seconds + (self.timeout or 0)
            if self.warmup_timeout:
                limit = min(limit, self.warmup_timeout)
            return (limit or None), "the warm-up budget of a restarted worker"
        return self.warmup_timeout, "--warmup-timeout"

    # the process --------------------------------------------------------------------------------
    def load(self, dtype: str) -> dict:
        """Start the worker and load the TARGET in it: its mode, declared failures, skip reason."""
        self.dtype = dtype
        return self._start()

    def _start(self) -> dict:
        _make_room()
        self._started = time.perf_counter()
        # forked from the fork server on the CPU; on a GPU a fresh process, whose Triton kernels compile
        self.child = Child("ropespec.implementations.boundary.worker", output=self.output, fork=self.device == "cpu")
        self._ends = weakref.finalize(self, _end_worker, self.child, id(self))  # when the host is dropped
        self.warm = False
        self.live = set()
        _touch(self)
        load = Load(self.target, self.shape, self.label, self.array, self.dtype, self.device, self.memory_limit,
                    list(sys.path), os.getcwd(), threads.sized(triton_mode.environment(dict(os.environ), self.device)))
        info = self._request(load, "importing the TARGET")
        _preload(info.get("libraries") or [], self.warmup_timeout)
        return info

    def _ensure(self) -> None:
        if self.child is None:
            self.restarts += 1
            self._start()
        else:
            _touch(self)

    def _request(self, msg, what: str, scale: float = 1.0):
        budget, which = self._budget()
        if self.warm and budget and scale > 1.0:  # a long call: --timeout per TIMEOUT_ROWS of its rows
            budget, which = budget * scale, f"--timeout times {scale:.3g} for a call of its size"
        child = self.child
        mark = self.output.total
        self.pending = True  # until its reply is read: a request cut short (Ctrl-C) leaves the channel out of step
        try:
            reply = child.request(msg, budget)
        except TimedOut:
            self.child = None
            self._ends.detach()
            _LIVE.pop(id(self), None)
            if not self.warm and which == "--warmup-timeout":
                self.warmup_overran = True
            self.stopped_by = "timeout"
            raise Fault(f"{what} did not return within {budget:g} s ({which}); its worker process was stopped, "
                        "and a fresh one runs the next call", "timeout") from None
        except Died as d:
            self.child = None
            self._ends.detach()
            _LIVE.pop(id(self), None)
            self.stopped_by = "crash"
            memory = killed_for_memory(child.returncode, child.peak_rss, self.memory_limit)
            raise Fault(f"{what} ended the worker process: it {d.status}{memory}{crash_words(self.output.since(mark))}",
                        "crash", cause=OUT_OF_MEMORY if "out of memory" in memory else None) from None
        self.pending = False
        return unwrap(reply)

    # the interface the Implementation uses -------------------------------------------------------------
    def bind(self, hid: int, expect: Expect, fresh: bool = False) -> dict:
        self._ensure()
        d = expect.to_dict()
        info = self._request(Bind(hid, d), "the factory")
        if isinstance(info, dict) and info.get("libraries"):
            _preload(info.pop("libraries"), self.warmup_timeout)
        self.binds[hid] = d
        if fresh:
            self.fresh.add(hid)
        self.live.add(hid)
        return info

    def drop(self, hid: int) -> None:
        """Forget handle ``hid`` here and in the worker, which lets go of what its factory built."""
        self.binds.pop(hid, None)
        self.fresh.discard(hid)
        if hid in self.live and self.child is not None:
            self.live.discard(hid)
            self._request(Drop(hid), "letting go of a built function")

    def op(self, hid: int, name: str, *args):
        self._ensure()
        if hid not in self.live:
            if hid in self.fresh:
                raise Fault("not called: this decoder's state was lost when its worker process was stopped "
                            f"(after a {self.stopped_by or 'restart'})", self.stopped_by or "crash")
            self._request(Bind(hid, self.binds[hid]), "the factory")  # rebuilt in the fresh worker
            self.live.add(hid)
        self.warm_up(hid)
        return self._request(Operate(hid, name, args), self.says(name), timeout_scale(args))

    def warm_up(self, hid: int) -> dict:
        """The warm-up call of this worker, once: a small call of ropespec's, on its own budget; what it says of
        TARGET as a whole (Host.warmup); {} once warm."""
        if self.warm:
            return {}
        said = self._request(Warmup(hid), "the warm-up call (two rows at positions 0 and 1)")
        self.warm = True
        if self.warmup_seconds is None:
            self.warmup_seconds = time.perf_counter() - self._started
        return said

    def warmup_verdict(self, hid: int) -> dict:
        """As :meth:`warm_up`, in a live worker with ``hid`` built (the loader's check before any property)."""
        self._ensure()
        return self.warm_up(hid)

    def attr(self, name: str, *args):
        """Call the loaded module's function ``name`` with plain Python values (the lab grader)."""
        self._ensure()
        value = self._request(CallModule(name, args), f"{name}(...)")
        self.warm = True
        return value

    def stop(self) -> None:
        """Stop the worker; the next request starts a fresh one. Processes the code under test left running below it
        are stopped too, and remembered in ``left_behind`` for the report."""
        if self.child is not None:
            try:  # the worker ends and reaps them itself (it is their subreaper): nothing left, not even a zombie
                said = [] if self.pending else unwrap(self.child.request(Stop(), STOP_BUDGET))
                self.left_behind += [str(p) for p in said] if isinstance(said, list) else []
            except (TimedOut, Died, OSError, EOFError, TypeError, RuntimeError, Fault):
                pass  # a worker that does not answer (or was cut off mid-call): its tree is killed from here
            self.left_behind += [f"pid {pid}: {cmd}" if cmd else f"pid {pid}" for pid, cmd in self.child.kill()]
            self.child = None
            self._ends.detach()
        _LIVE.pop(id(self), None)

    close = stop
