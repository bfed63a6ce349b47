"""The worker process: ``python -m implementations.worker FD``.

It loads the TARGET itself, builds factories, and answers operations from its parent over the
channel on file descriptor FD (see :mod:`implementations.isolation`). It runs in its own session, so
the terminal's Ctrl-C never reaches it; it ends when its parent dies (PR_SET_PDEATHSIG on Linux,
and a thread that watches the parent's pid everywhere). Its standard output and error go to a pipe
its parent reads (what the target prints is captured, with faulthandler's report of a crash).

Messages (parent -> worker): ``("load", ref, settings)``, ``("bind", hid, expect_dict)``,
``("op", hid, name, args)``, ``("drop", hid)``, ``("stop",)`` (end what the code under test left running, just
before the worker itself is stopped). Replies: ``("ok", value)``, ``("fault", message, word)``,
``("unsupported", message)``, ``("target-error", message)``, ``("not-implemented", message)``.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(parent: int) -> None:
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
    _watch_parent(parent)
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
            conn.send(("fault", f"the result could not be sent back: {type(e).__name__}: {e}", "shape"))


def _libraries(names: set[str]) -> list[str]:
    """The modules among ``names`` that are installed libraries (site-packages or the standard library),
    never the TARGET's own module: what a fork server may import ahead for the next worker."""
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
    def __init__(self):
        self.host = None
        self.module = None

    def __call__(self, msg):
        from implementations.contract import Fault, TargetError, Unsupported

        try:
            return ("ok", self.handle(msg))
        except Fault as e:
            return ("fault", e.message, e.diagnosis, e.cause)
        except Unsupported as e:
            return ("unsupported", str(e))
        except TargetError as e:
            return ("target-error", str(e))
        except NotImplementedError as e:
            return ("not-implemented", str(e))
        except BaseException as e:  # raised outside a guarded call: at import, or ropespec's own bug
            from implementations.contract import describe_exit, where

            if isinstance(e, SystemExit):
                return ("fault", f"{describe_exit(e)}{where(e)}: it tried to end the process", "crash")
            return ("fault", f"{type(e).__name__}: {e}{where(e)}", "exception")

    def handle(self, msg):
        kind = msg[0]
        if kind == "load":
            return self.load(*msg[1:])
        if kind == "bind":
            from spec.expectation import Expect

            before = set(sys.modules)
            info = self.host.bind(msg[1], Expect.from_dict(msg[2]))
            # a factory that imports its libraries when called (transformers' modeling code in the hf
            # adapter): the fork server may import them ahead for the next worker too
            new = _libraries(set(sys.modules) - before)
            return dict(info, libraries=new) if new and isinstance(info, dict) else info
        if kind == "op":
            return self.host.op(msg[1], msg[2], msg[3])
        if kind == "warmup":
            return self.host.warmup(msg[1])
        if kind == "attr":  # a module's function called with plain Python values (the lab grader)
            from implementations.host import guarded, plain

            return plain(guarded(f"{msg[1]}(...)", getattr(self.module, msg[1]), *msg[2]))
        if kind == "drop":
            self.host.drop(msg[1])
            return None
        if kind == "stop":  # before the parent stops this worker: end and reap what the code under test left
            return stop_descendants()
        raise ValueError(f"unknown message {kind!r}")

    def load(self, ref: dict, settings: dict):
        from implementations import arrays
        from implementations.host import Host, describe_loaded, guarded, limit_memory, pipeline, resolve

        limit_memory(settings.get("memory_limit"))  # before the TARGET's module allocates anything
        sys.path[:] = list(settings["path"])
        if settings.get("cwd"):
            os.chdir(settings["cwd"])
        if settings.get("env") is not None:
            os.environ.clear()
            os.environ.update(settings["env"])
        t0 = time.perf_counter()
        if "lab" in ref:  # a whole module whose functions are called by name
            from implementations.host import load_module

            self.module = guarded("importing the module", load_module, ref["lab"])
            names = [n for n in dir(self.module) if not n.startswith("_") and callable(getattr(self.module, n))]
            return {"callables": names, "load_seconds": time.perf_counter() - t0}
        before = set(sys.modules)
        obj = guarded("importing the TARGET", resolve, ref)
        if settings.get("pipeline"):  # --form kernel|qk --table TARGET: the two as one apply function
            form, table = settings["pipeline"]
            tobj = guarded("importing the --table TARGET", resolve, table if isinstance(table, dict) else {"target": table})
            obj = pipeline(obj, tobj, form, settings["label"], table.get("qualname", "") if isinstance(table, dict) else table)
        layout, inplace = settings.get("layout", "nd"), settings.get("inplace", False)
        info = describe_loaded(obj, layout if layout in ("vllm", "thd") else settings["kind"], settings["label"])
        info["skip_reason"] = arrays.unsupported_reason(settings["array"], settings["dtype"], settings["device"])
        info["load_seconds"] = time.perf_counter() - t0
        info["libraries"] = _libraries(set(sys.modules) - before)
        if info["mode"]:
            self.host = Host(obj, info["mode"], settings["array"], settings["device"], settings["kind"], layout, inplace)
        return info


if __name__ == "__main__":
    main(sys.argv[1:])
