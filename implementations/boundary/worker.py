"""The worker process: ``python -m ropespec.implementations.boundary.worker FD``.

It loads the TARGET itself, builds factories, and answers operations from its parent over the
channel on file descriptor FD (see :mod:`ropespec.implementations.boundary.workers`). It runs in its own session, so
the terminal's Ctrl-C never reaches it; it ends when its parent dies (PR_SET_PDEATHSIG on Linux,
and a thread that watches the parent's pid everywhere). Its standard output and error go to a pipe
its parent reads (what the target prints is captured, with faulthandler's report of a crash).

Messages are the typed records of :mod:`ropespec.implementations.boundary.messages`: the parent sends :class:`Load`, :class:`Bind`,
:class:`Warmup`, :class:`Operate`, :class:`CallModule`, :class:`Drop` and :class:`Stop`, and every request is
answered with its reply (:func:`ropespec.implementations.boundary.messages.reply_to`).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time

from ropespec.implementations.boundary import threads
from ropespec.implementations.boundary.host import guarded, limit_memory, load_target, plain
from ropespec.implementations.boundary.targets import load_module
from ropespec.implementations.boundary.messages import (
    Bind,
    CallModule,
    Drop,
    Faulted,
    Load,
    Operate,
    Stop,
    Warmup,
    reply_to,
)
from ropespec.spec.expectation import Expect


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch_parent(parent: int) -> None:
    """End when ``parent`` (the ropespec process) dies. A worker forked by the fork server is that
    server's child: it watches ropespec's pid, so that the server may go away without taking it along."""
    forked = os.getppid() != parent
    if not forked:
        try:  # Linux: the kernel kills us the moment the parent dies
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:
            pass
        if os.getppid() != parent:
            os._exit(0)
    elif not _alive(parent):
        os._exit(0)

    def watch():
        while True:
            time.sleep(0.2)
            if (os.getppid() != parent) if not forked else not _alive(parent):
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="ropespec-parent-watch").start()


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Linux: orphaned descendants (a child the code under test forked, which called setsid and lost its parent)
    are reparented to this process rather than to init, so that they stay in its tree and end with it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    except Exception:
        pass


def descendants(pid: int) -> list[tuple[int, str]]:
    """The live (not zombie) processes below ``pid``, deepest last, each with its command line: read from /proc,
    so empty where there is none."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2 :].split()
        if len(rest) < 2:
            continue
        states[int(entry)] = rest[0]
        children.setdefault(int(rest[1]), []).append(int(entry))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        if states.get(p) != "Z":
            out.append((p, _cmdline(p)))
    return out


def stop_descendants(grace: float = 1.0) -> list[str]:
    """Kill every process below this one (it is their subreaper, so orphans are its children too) and reap them, so
    that none is left running or as a zombie; what was running, as "pid N: command line"."""
    found = descendants(os.getpid())
    for pid, _ in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not pid:
            time.sleep(0.005)
    return [f"pid {pid}: {cmd}" if cmd else f"pid {pid}" for pid, cmd in found]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200]
    except OSError:
        return ""


def reap(pid: int, seconds: float) -> tuple[int, int] | None:
    """Reap a child of this process within ``seconds``: (its status as Popen gives it, negative for a signal; its
    peak resident memory in bytes), or None while it still runs or when it is not this process's child."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            done, status, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            return code, usage.ru_maxrss * 1024  # Linux gives kilobytes
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def main(argv: list[str]) -> None:
    from multiprocessing.connection import Connection

    serve(Connection(int(argv[0])), int(argv[1]))


def serve(conn, parent: int) -> None:
    """The worker's loop: answer the parent's messages until it goes away."""
    watch_parent(parent)
    become_subreaper()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    faulthandler.enable(all_threads=False)
    serve = _Server()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        reply = serve(msg)
        try:
            conn.send(reply)
        except Exception as e:  # an unpicklable reply: say so rather than die
            conn.send(Faulted(f"the result could not be sent back: {type(e).__name__}: {e}", "shape"))


def _libraries(names: set[str]) -> list[str]:
    """The modules among ``names`` that are installed libraries (site-packages or the standard library),
    never the TARGET's own module: what a fork server may import ahead for the next worker (its Triton kernels are
    interpreted there as in the CPU workers it forks, ropespec.implementations.triton_mode)."""
    import sysconfig

    roots = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})
    out = []
    for name in sorted(names):
        mod = sys.modules.get(name)
        file = getattr(mod, "__file__", None) or ""
        if name.startswith("_ropespec_target_") or not file.startswith(roots):
            continue
        out.append(name)
    return out


class _Server:
    """The worker's side: one handler per request type (ropespec.implementations.boundary.messages)."""

    def __init__(self):
        self.host = None
        self.module = None

    def __call__(self, msg):
        return reply_to(lambda: self.handle(msg))

    def handle(self, msg):
        if isinstance(msg, Load):
            return self.load(msg)
        if isinstance(msg, Bind):
            before = set(sys.modules)
            info = self.host.bind(msg.hid, Expect.from_dict(msg.expect))
            # a factory that imports its libraries when called (transformers' modeling code in the hf
            # adapter): the fork server may import them ahead for the next worker too
            new = _libraries(set(sys.modules) - before)
            return dict(info, libraries=new) if new and isinstance(info, dict) else info
        if isinstance(msg, Operate):
            return self.host.op(msg.hid, msg.name, msg.args)
        if isinstance(msg, Warmup):
            return self.host.warmup(msg.hid)
        if isinstance(msg, CallModule):  # a module's function called with plain Python values (the lab grader)
            return plain(guarded(f"{msg.name}(...)", getattr(self.module, msg.name), *msg.args))
        if isinstance(msg, Drop):
            self.host.drop(msg.hid)
            return None
        if isinstance(msg, Stop):  # before the parent stops this worker: end and reap what the code under test left
            return stop_descendants()
        raise ValueError(f"unknown message {msg!r}")

    def load(self, msg: Load):
        limit_memory(msg.memory_limit)  # before the TARGET's module allocates anything
        sys.path[:] = list(msg.path)
        if msg.cwd:
            os.chdir(msg.cwd)
        if msg.env is not None:
            os.environ.clear()
            os.environ.update(msg.env)
        t0 = time.perf_counter()
        if "module_path" in msg.target:  # a whole module whose functions are called by name (the lab grader)
            self.module = guarded("importing the module", load_module, msg.target["module_path"])
            names = [n for n in dir(self.module) if not n.startswith("_") and callable(getattr(self.module, n))]
            return {"callables": names, "load_seconds": time.perf_counter() - t0}
        before = set(sys.modules)
        self.host, info = load_target(msg.target, msg.shape, msg.label, msg.array, msg.dtype, msg.device)
        info["libraries"] = _libraries(set(sys.modules) - before)
        threads.limit_loaded()
        return info


if __name__ == "__main__":
    main(sys.argv[1:])
