"""ropespec's own processes: a :class:`Child` (its own session, a message channel, its output captured, killed
with its process group, ending when its parent dies) and the fork server that starts them
(:mod:`ropespec.implementations.boundary.zygote`)."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from multiprocessing.reduction import send_handle
from pathlib import Path

from ropespec.implementations import triton_mode
from ropespec.implementations.boundary import threads
from ropespec.implementations.boundary.messages import Collect, Fork, Ok, Preload, Wait
from ropespec.implementations.boundary.worker import descendants, reap
from ropespec.implementations.contract import describe_status


#: the folder holding ropespec's packages, put on a child's PYTHONPATH
ROOT = str(Path(__file__).resolve().parents[2])


_CHILDREN: set = set()


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
                    reaped = None  # the fork server is gone (init reaps the worker) or mid-exchange (it reaps it)
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
        tree = (self.module != "ropespec.implementations.boundary.zygote") if tree is None else tree
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


class Reentered(RuntimeError):
    """A request to the fork server from the thread that is in the middle of an exchange with it."""


class ForkServer:
    """The parent's side of :mod:`ropespec.implementations.boundary.zygote`: one request and its answer at a time.

    A request from the thread already in an exchange is refused (:class:`Reentered`), never waited for: the garbage
    collector runs a dropped worker's finalizer wherever the thread is, also while it polls for the server's answer,
    and a kill that then waited for the lock that exchange holds would wait forever. The server reaps such a worker
    itself after its next message."""

    def __init__(self):
        # the workers it forks run on the CPU (a GPU worker is started afresh): their Triton kernels, preloaded here
        # or imported by the TARGET, are interpreted, as triton_mode.environment says for the CPU
        self.child = Child("ropespec.implementations.boundary.zygote",
                           env=threads.sized(triton_mode.environment(dict(os.environ), "cpu")))
        self.preloaded: set[str] = set()
        self.lock = threading.Lock()
        self._in_exchange: int | None = None  # the thread holding the lock

    @contextlib.contextmanager
    def _exchange(self):
        if self._in_exchange == threading.get_ident():
            raise Reentered("the fork server is answering this thread's request")
        with self.lock:
            self._in_exchange = threading.get_ident()
            try:
                yield
            finally:
                self._in_exchange = None

    def fork(self, channel: int, output: int) -> int:
        with self._exchange():
            self.child.send(Fork())
            send_handle(self.child.conn, channel, self.child.pid)
            send_handle(self.child.conn, output, self.child.pid)
            return self._answer(10.0)

    def wait(self, pid: int, seconds: float) -> int | None:
        with self._exchange():
            self.child.send(Wait(pid, seconds))
            return self._answer(seconds + 10.0)

    def collect(self) -> None:
        """Let the fork server reap what ended below it (the processes a stopped worker left are its to reap)."""
        with self._exchange():
            self.child.send(Collect())
            self._answer(5.0)

    def preload(self, names: list[str], budget: float | None) -> None:
        new = [n for n in names if n not in self.preloaded]
        if not new:
            return
        with self._exchange():
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
