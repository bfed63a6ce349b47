"""The process boundary: the implementation under test runs in a worker process that ropespec owns.

:class:`Child` is a Python process of ropespec's: its own session (the terminal's Ctrl-C goes to
ropespec, which stops its children), a message channel, its standard output and error captured
(:class:`Captured`: the first and last 4 KiB, and how much was cut between), killed with its whole
process group, and ending by itself when its parent dies.

:class:`WorkerHost` is the parent's side of one implementation's worker (``ropespec.implementations.worker``).
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

import atexit
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from multiprocessing.connection import Connection
from pathlib import Path

from multiprocessing.reduction import send_handle

from ropespec.implementations import triton_mode
from ropespec.implementations.contract import OUT_OF_MEMORY, Fault, describe_status, killed_for_memory, timeout_scale
from ropespec.implementations.host import HostClient
from ropespec.implementations.messages import (
    Bind,
    CallModule,
    Collect,
    Fork,
    Load,
    Ok,
    Operate,
    Preload,
    Stop,
    Wait,
    Warmup,
    unwrap,
)
from ropespec.implementations.worker import descendants, reap
from ropespec.spec.expectation import Expect

#: the folder holding ropespec's packages, put on a child's PYTHONPATH
ROOT = str(Path(__file__).resolve().parents[1])
#: workers alive at once in one process
MAX_LIVE = int(os.environ.get("ROPESPEC_MAX_WORKERS", "32"))

_CHILDREN: set = set()
#: seconds a worker has to end what its code under test left running before it is killed itself
STOP_BUDGET = 3.0


class Captured:
    """What a child printed: the first and last ``limit`` bytes, and the count of the rest."""

    def __init__(self, limit: int = 4096):
        self.limit = limit
        self.total = 0
        self.head = bytearray()
        self.tail = bytearray()
        self._lock = threading.Lock()

    def __getstate__(self):  # crosses from a -j runner with its impl
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            room = self.limit - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if data:
                self.tail += data
                del self.tail[: max(0, len(self.tail) - self.limit)]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        with self._lock:
            head = self.head.decode("utf-8", "replace")
            tail = self.tail.decode("utf-8", "replace")
            cut = self.cut
        if not tail:
            return head
        middle = f"\n[... {cut} bytes cut ...]\n" if cut else ""
        return head + middle + tail

    def since(self, mark: int) -> str:
        """What was printed after ``total`` was ``mark`` (as much of it as the tail still holds)."""
        with self._lock:
            new = self.total - mark
            raw = bytes(self.head[len(self.head) - new:] if not self.tail and new <= len(self.head) else
                        self.tail[-new:] if new > 0 else b"")
        return raw.decode("utf-8", "replace")

    def to_json(self) -> dict:
        return {"bytes": self.total, "cut": self.cut, "text": self.text()}


_FRAME = re.compile(r'File "(.+)", line (\d+) in (\S+)')


def crash_words(text: str) -> str:
    """The gist of what a dying process printed: the fatal error's line and the innermost frame of the
    code under test (faulthandler's report lists the most recent call first)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fatal = next((ln for ln in lines if ln.startswith(("Fatal Python error", "terminate called"))), None)
    frame = None
    for ln in lines:
        m = _FRAME.search(ln)
        if m and not m.group(1).startswith((ROOT, sys.base_prefix)) and not m.group(1).startswith("<"):
            frame = f"in {m.group(3)} at {Path(m.group(1)).name}:{m.group(2)}"
            break
    words = [w for w in (fatal, frame) if w]
    if not words and lines:
        words = [" | ".join(lines[-3:])]
    return "; it printed: " + ", ".join(words) if words else ""



class TimedOut(Exception):
    pass


class Died(Exception):
    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


class Child:
    """A Python process of ropespec's running ``python -m MODULE FD PARENT_PID``, or, for a worker when a
    fork server is available (:func:`fork_server`), forked from it."""

    def __init__(self, module: str, output: Captured | None = None, capture: bool = True, fork: bool = False,
                 env: dict | None = None):
        ours, theirs = socket.socketpair()
        self.module = module
        self.proc = None
        self.returncode: int | None = None
        self.peak_rss: int | None = None  # bytes, once reaped
        server = fork_server() if fork else None
        stream = None
        if server is not None:
            r, w = os.pipe()
            try:
                self._pid = server.fork(theirs.fileno(), w)
            except Exception:
                os.close(r)
                server = None
            finally:
                os.close(w)
            if server is not None:
                stream = r
        if server is None:
            env = dict(os.environ if env is None else env)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
            env.setdefault("PYTHONUNBUFFERED", "1")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", module, str(theirs.fileno()), str(os.getpid())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if capture else None, stderr=subprocess.STDOUT if capture else None,
                start_new_session=True, env=env,
            )
            self._pid = self.proc.pid
            stream = self.proc.stdout.fileno() if capture else None
        theirs.close()
        self.server = server
        self.conn = Connection(ours.detach())
        self.output = output if output is not None else Captured()
        self._stream = stream
        self._reader = None
        if stream is not None:
            self._reader = threading.Thread(target=self._read, daemon=True, name="ropespec-output")
            self._reader.start()
        _CHILDREN.add(self)

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._stream, 65536)
            except (OSError, ValueError):
                return
            if not data:
                return
            self.output.feed(data)

    @property
    def pid(self) -> int:
        return self._pid

    def send(self, msg) -> None:
        try:
            self.conn.send(msg)
        except (OSError, EOFError):
            raise Died(self.status()) from None

    def receive(self, budget: float | None):
        """The reply, waiting at most ``budget`` seconds (None: no limit)."""
        if not self.conn.poll(budget):
            self.kill()
            raise TimedOut()
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            raise Died(self.status()) from None

    def request(self, msg, budget: float | None):
        self.send(msg)
        return self.receive(budget)

    def _wait(self, seconds: float) -> int | None:
        """Reap the process within ``seconds``: its status (and its peak resident memory, ``peak_rss``), or None."""
        if self.returncode is None:
            if self.proc is not None:
                reaped = reap(self.proc.pid, seconds)
                if reaped is not None:
                    self.returncode, self.peak_rss = reaped
                    self.proc.returncode = self.returncode  # reaped here: Popen must not wait for it again
            elif self.server is not None:
                try:
                    reaped = self.server.wait(self._pid, seconds)
                except (Died, TimedOut, RuntimeError, OSError):
                    reaped = None  # the fork server is gone: init reaps the worker
                if reaped is not None:
                    self.returncode, self.peak_rss = reaped
        return self.returncode

    def status(self) -> str:
        """How the process ended, in words (it is given two seconds to finish dying)."""
        if self._wait(2) is None:
            self.kill()
        if self._reader is not None:
            self._reader.join(timeout=1)  # the last words it printed
        self._close()
        return describe_status(self.returncode)

    def kill(self, tree: bool | None = None) -> list[tuple[int, str]]:
        """Kill the child's process group and reap it; with ``tree`` (the default but for the fork server, whose
        workers outlive it) also what left the group with setsid but stayed below it (a worker is a subreaper).
        Returns the processes below it that were still running."""
        tree = (self.module != "ropespec.implementations.zygote") if tree is None else tree
        left = descendants(self._pid) if tree and self.returncode is None else []
        for pid, _ in left:  # first, while they are still below it
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(self._pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._wait(5)
        self._close()
        return left

    def _close(self) -> None:
        _CHILDREN.discard(self)
        try:
            self.conn.close()
        except OSError:
            pass
        if self._stream is not None and (self._reader is None or not self._reader.is_alive()):
            if self.proc is not None and self.proc.stdout is not None:
                self.proc.stdout.close()
            else:
                try:
                    os.close(self._stream)
                except OSError:
                    pass
            self._stream = None


class ForkServer:
    """The parent's side of :mod:`ropespec.implementations.zygote`."""

    def __init__(self):
        # the workers it forks run on the CPU (a GPU worker is started afresh): their Triton kernels, preloaded here
        # or imported by the TARGET, are interpreted, as triton_mode.environment says for the CPU
        self.child = Child("ropespec.implementations.zygote", env=triton_mode.environment(dict(os.environ), "cpu"))
        self.preloaded: set[str] = set()
        self.lock = threading.Lock()

    def fork(self, channel: int, output: int) -> int:
        with self.lock:
            self.child.send(Fork())
            send_handle(self.child.conn, channel, self.child.pid)
            send_handle(self.child.conn, output, self.child.pid)
            return self._answer(10.0)

    def wait(self, pid: int, seconds: float) -> int | None:
        with self.lock:
            self.child.send(Wait(pid, seconds))
            return self._answer(seconds + 10.0)

    def collect(self) -> None:
        """Let the fork server reap what ended below it (the processes a stopped worker left are its to reap)."""
        with self.lock:
            self.child.send(Collect())
            self._answer(5.0)

    def preload(self, names: list[str], budget: float | None) -> None:
        new = [n for n in names if n not in self.preloaded]
        if not new:
            return
        with self.lock:
            self.child.send(Preload(tuple(new)))
            self._answer(budget)
        self.preloaded.update(new)

    def _answer(self, budget: float | None):
        reply = self.child.receive(budget)
        if not isinstance(reply, Ok):
            raise RuntimeError(getattr(reply, "message", repr(reply)))
        return reply.value


_SERVER: dict = {}


def fork_server() -> ForkServer | None:
    """This process's fork server (started on first use), or None where there is none: not Linux (forking a
    process with libraries loaded is not safe everywhere), or
    ``ROPESPEC_FORK_SERVER=0``, or it failed once (workers are then started afresh, just slower)."""
    if not sys.platform.startswith("linux") or os.environ.get("ROPESPEC_FORK_SERVER") == "0" or _SERVER.get("broken"):
        return None
    server = _SERVER.get(os.getpid())
    if server is None:
        try:
            server = _SERVER[os.getpid()] = ForkServer()
        except Exception:
            _SERVER["broken"] = True
            return None
    if server.child.returncode is not None or server.child.conn.closed:
        _SERVER["broken"] = True
        return None
    return server


def _preload(names: list[str], budget: float | None) -> None:
    """Let the fork server import the installed libraries a worker needed, for the next workers."""
    server = fork_server()
    if server is None or not names:
        return
    try:
        server.preload(names, budget)
    except Exception:  # it timed out, died or grew a thread: stop forking from it (the workers it forked
        _SERVER["broken"] = True  # watch ropespec, not it; it is stopped at exit with the other children)


@atexit.register
def _kill_children() -> None:
    servers = {id(s.child) for s in _SERVER.values() if isinstance(s, ForkServer)}
    for child in sorted(_CHILDREN, key=lambda c: id(c) in servers):  # workers before the fork server, which then
        if id(child) in servers:  # reaps what they left (it is their subreaper)
            try:
                next(s for s in _SERVER.values() if isinstance(s, ForkServer) and s.child is child).collect()
            except Exception:
                pass
        try:
            child.kill(tree=True)  # at exit, everything below ropespec ends
        except Exception:
            pass


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
        self.child = Child("ropespec.implementations.worker", output=self.output, fork=self.device == "cpu")
        self._ends = weakref.finalize(self, _end_worker, self.child, id(self))  # when the host is dropped
        self.warm = False
        self.live = set()
        _touch(self)
        load = Load(self.target, self.shape, self.label, self.array, self.dtype, self.device, self.memory_limit,
                    list(sys.path), os.getcwd(), triton_mode.environment(dict(os.environ), self.device))
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

    def warm_up(self, hid: int) -> str | None:
        """The warm-up call of this worker, once: a small call of ropespec's, on its own budget; what it says of
        TARGET as a whole (Host.warmup), or None."""
        if self.warm:
            return None
        said = self._request(Warmup(hid), "the warm-up call (two rows at positions 0 and 1)")
        self.warm = True
        if self.warmup_seconds is None:
            self.warmup_seconds = time.perf_counter() - self._started
        return said

    def warmup_verdict(self, hid: int) -> str | None:
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
