"""The host side of the process boundary: where the implementation under test is loaded, built and called.

:func:`load_target` loads a TARGET (a target string or a function's reference) and says what it is; a :class:`Host`
holds it and the functions its factory built (one per handle), and answers the operations its form declares
(:mod:`ropespec.implementations.families`) with float64 numpy arrays. Every conversion into and out of the
implementation's arrays, every check of what it returned (kind, dtype, shape) and every exception it raised are
dealt with here, so the parent only ever sees plain arrays or a :class:`~ropespec.implementations.contract.Fault` that names
the fault.

The same loader and Host run in a worker process (``ropespec.implementations.boundary.worker``, the default) or, for a callable
another process cannot load (a lambda, a function defined in ``__main__``), in the caller's own process
(:class:`InProcessHost`).
"""

from __future__ import annotations

import importlib
import queue
import re
import sys
import threading
import time
from typing import Any, Callable

import numpy as np

from ropespec.implementations import arrays, triton_mode
from ropespec.implementations.boundary.targets import describe_loaded, resolve
from ropespec.implementations.contract import (
    CONTRACT_SHAPE,
    OUT_OF_MEMORY,
    Fault,
    TargetError,
    Unsupported,
    describe_exit,
    format_bytes,
    is_decoder,
    is_out_of_memory,
    where,
)
from ropespec.implementations.families import Form, form_of
from ropespec.implementations.families.rope.kernel import pipeline
from ropespec.implementations.shape import CallShape
from ropespec.spec.expectation import Expect


def load_target(target, shape: CallShape, label: str, array: str, dtype: str, device: str,
                in_worker: bool = True) -> tuple[Host | None, dict]:
    """Load TARGET (a reference dict, or the callable itself in-process) as its call shape says: (the Host that
    calls it, or None when it does not fit its form; what it is: mode, declared failures, promise, error, skip
    reason). A kernel with its library's table (``shape.table``) is loaded as one apply function."""
    t0 = time.perf_counter()
    before = set(sys.modules)
    triton_mode.watch_launches()  # before anything of the TARGET's is imported: a launch at import time counts
    mark = triton_mode.launch_mark()
    obj = guarded("importing the TARGET", resolve, target) if isinstance(target, dict) else target
    if shape.table is not None:
        table = shape.table
        tobj = guarded("importing the --table TARGET", resolve, {"target": table} if isinstance(table, str) else table) \
            if isinstance(table, (str, dict)) else table
        obj = pipeline(obj, tobj, shape.declared, shape.own_layout, describe_loaded(obj, shape.declared, label),
                       describe_loaded(tobj, form_of(CallShape(form="table")), shape.table_label))
    form = form_of(shape)
    info = describe_loaded(obj, form, label, shape.layout)
    info["skip_reason"] = arrays.unsupported_reason(array, dtype, device)
    info["load_seconds"] = time.perf_counter() - t0
    own = sys.modules.get(getattr(obj, "__module__", None) or "")
    info.update(triton_notes(set(sys.modules) - before, mark, label, extra=[own] if own is not None else []))
    if info.get("notes") and not info["skip_reason"]:  # Triton kernels: judged only in a dtype the interpreter computes
        info["skip_reason"] = triton_mode.interpreter_fault(dtype)
    host = None
    if info["mode"] and not info["error"]:
        host = Host(obj, info["mode"], array, device, shape)
        host.in_worker = in_worker
        host.label = label
    return host, info


def triton_notes(new: set[str], mark: int, label: str, extra=()) -> dict:
    """What the report says of the Triton kernels among the modules ``new`` (imported by loading the TARGET, by its
    factory or by its warm-up call) and ``extra``, and of those the interpreter launched since ``mark``
    (triton_mode.launch_mark): {"notes": [...]}; {} when there are none. Triton's own are not named, but a launch of
    any kernel counts: the interpreter ran, launched from ``label``."""
    modules = [sys.modules[n] for n in sorted(new) if n in sys.modules] + [m for m in extra if m is not None]
    try:
        launched = triton_mode.launched_since(mark)
        found = triton_mode.kernels(modules, launched)
    except Exception:  # looking for kernels must never be taken for the TARGET's failure
        return {}
    if not found and not launched:
        return {}
    patched = triton_mode.cuda_device_noop()
    return {"notes": triton_mode.describe(found, patched, launched_from=label if launched else None)}


# -- calling ---------------------------------------------------------------------------------------
def guarded(what: str, fn: Callable, *args, in_worker: bool = True):
    """Call the implementation; whatever it raises becomes a Fault with its word. In a worker a
    KeyboardInterrupt can only come from the target itself (the worker never receives Ctrl-C)."""
    try:
        return fn(*args)
    except (Unsupported, TargetError):
        raise
    except Exception as e:
        if is_out_of_memory(e):  # ended as a process would have ended without the limit: no further case runs
            raise Fault(f"{what} ran out of memory: {type(e).__name__}: {e}{where(e)}{_memory_limit_note()}", "crash",
                        cause=OUT_OF_MEMORY) from None
        hint = ""
        if what == "factory" and "Expect" in str(e):  # a one-argument function handed an expectation
            hint = (" (it has one required argument, so it was called as a factory, make(expect): a plain function "
                    "takes (x, positions), a factory takes (expect) and returns such a function)")
        raise Fault(f"{what} raised {type(e).__name__}: {e}{where(e)}{hint}", "exception") from None
    except SystemExit as e:
        raise Fault(f"{what} {describe_exit(e)}: it tried to end the process{where(e)}", "crash") from None
    except KeyboardInterrupt as e:
        if not in_worker:
            raise  # in-process, Ctrl-C and a target's own KeyboardInterrupt look alike: it is the user's
        raise Fault(f"{what} raised KeyboardInterrupt itself (no Ctrl-C was sent){where(e)}", "exception") from None
    except BaseException as e:  # GeneratorExit or a user's BaseException subclass
        raise Fault(f"{what} raised {type(e).__name__} (a BaseException, not an Exception): {e}{where(e)}",
                    "exception") from None


#: an error raised on an array of the kind handed over that names an attribute or type of another array library
_FOREIGN = re.compile(r"'(numpy\.ndarray|list)' object has no attribute '(\w+)'|(?:but got|not|got) "
                      r"(?:numpy\.ndarray|list)\b")


def warmup_mismatch(err: Fault, array: str, form: Form) -> str | None:
    """What a failed warm-up call says of TARGET as a whole, or None: a result of another shape than the contract
    gives (ropespec took it for a function it is not, and every property would call it so, a bigger one each time),
    or an error on ``array`` arrays that names an attribute of torch tensors or jax arrays (it takes those)."""
    if err.cause == CONTRACT_SHAPE:
        said = err.message if "): " in err.message else \
            f"{form.label} {form.signature[1] if form.signature else 'make(expect)'}: {err.message}"
        return (f"its warm-up call returned another shape than the contract ropespec took it for gives: {said}; no "
                f"property was run (a function of another signature or family: see --family and --form)")
    if err.diagnosis != "exception" or array not in ("numpy", "list"):
        return None
    found = _FOREIGN.search(err.message)
    if not found:
        return None
    attribute = found.group(2)
    for library, kind in (("numpy", "ndarray"), ("torch", "Tensor"), ("jax", "Array")):
        if library == array:
            continue
        try:
            mod = importlib.import_module(library)
        except Exception:  # noqa: BLE001 - a library that does not import here is simply not the one
            continue
        if attribute is None or hasattr(getattr(mod, kind), attribute):
            return (f"its warm-up call on {array} arrays raised {err.message.partition(' raised ')[2]}: it takes "
                    f"{library} arrays; check it with --array {library}")
    return None


def _memory_limit_note() -> str:
    """' (at the worker's memory limit of 12 GB, --memory-limit)' where this process has one."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_DATA)[0]
    except (ImportError, OSError, ValueError):
        return ""
    if soft in (resource.RLIM_INFINITY, -1):
        return ""
    return f" (at the worker's memory limit of {format_bytes(soft)}, --memory-limit)"


def limit_memory(limit: int | None) -> None:
    """Cap this process's data (heap and private writable mappings: numpy's and torch's arrays) at ``limit`` bytes,
    enforced by the kernel (RLIMIT_DATA): an allocation beyond it fails with MemoryError rather than take the
    machine down. None: no limit."""
    if not limit:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (int(limit), int(limit)))
    except (ImportError, OSError, ValueError):
        pass  # not on this system: the parent still reads a SIGKILL's peak memory


def plain(value):
    """A result as plain Python values (numpy arrays and scalars become lists and floats)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


class Host:
    """A loaded TARGET and the functions built from it, answering its form's operations with float64 arrays."""

    in_worker = True
    label = "the TARGET"  # as the report names it (load_target sets it)

    def __init__(self, obj: Callable, mode: str, array: str, device: str, shape: CallShape):
        self.obj = obj
        self.mode = mode
        self.shape = shape
        self.form = form_of(shape)
        self.array = array
        self.device = device
        self.fns: dict[int, Any] = {}
        self.expects: dict[int, Expect] = {}

    def call(self, what: str, fn: Callable, *args):
        """Call the implementation (see :func:`guarded`)."""
        return guarded(what, fn, *args, in_worker=self.in_worker)

    # handles -------------------------------------------------------------------------------------
    def bind(self, hid: int, expect: Expect) -> dict:
        """Build the function for ``expect`` under handle ``hid`` (the factory is called once)."""
        found: dict = {}
        if self.mode == "plain":
            fn = self.obj
        else:
            def build(e: Expect):
                try:
                    return self.obj(e)
                except NotImplementedError as err:  # the factory declines this expectation
                    raise Unsupported(str(err) or "NotImplementedError") from None

            before, mark = set(sys.modules), triton_mode.launch_mark()
            fn = self.call("factory", build, expect)
            found = triton_notes(set(sys.modules) - before, mark, self.label)  # a factory that imports or runs kernels
            if found and (fault := triton_mode.interpreter_fault(expect.dtype)):
                raise Unsupported(fault)
            if self.form.builds is not None:  # a family whose factory makes no function (a model)
                made, what = self.form.builds
                if not made(fn):
                    raise Fault(f"its factory returned {type(fn).__name__}, not {what}", "shape", cause=CONTRACT_SHAPE)
            elif not is_decoder(fn) and not callable(fn):
                raise Fault(f"it has one required argument, so it was called as a factory, make(expect), and returned "
                            f"{type(fn).__name__}, not a function: a plain function takes (x, positions), a factory "
                            f"takes (expect) and returns such a function", "shape", cause=CONTRACT_SHAPE)
        self.fns[hid] = fn
        self.expects[hid] = expect
        return {"decoder": is_decoder(fn), **found}

    def warmup(self, hid: int) -> dict:
        """One small call (two rows at positions 0 and 1) before the first timed one, so that imports,
        JIT compilation and autotuning happen on the warm-up budget. What it returns or raises is not
        judged here (the properties judge every call); ending the process counts (a crash), and two answers say
        that TARGET is not the function its contract describes (:func:`warmup_mismatch`): {"said": that line or
        None}. Where the call ran Triton kernels (a launcher that imports or reaches them only when called), what
        :func:`triton_notes` says of them and, for a dtype the interpreter miscomputes, why no property judges
        them: "notes", "skip_reason"."""
        fn, e = self.fns[hid], self.expects[hid]
        if is_decoder(fn):
            return {"said": None}  # stateful: its factory call was the warm-up
        before, mark = set(sys.modules), triton_mode.launch_mark()
        said = None
        try:
            self.form.warmup(self, fn, e)
        except Fault as err:
            if err.diagnosis == "crash":
                raise
            said = warmup_mismatch(err, self.array, self.form)
        found = triton_notes(set(sys.modules) - before, mark, self.label)
        if found:
            found["skip_reason"] = triton_mode.interpreter_fault(e.dtype)
        return {"said": said, **found}

    def drop(self, hid: int) -> None:
        self.fns.pop(hid, None)
        self.expects.pop(hid, None)

    def op(self, hid: int, name: str, args: tuple):
        fn = self.fns[hid]
        op = self.form.operations("decoder" if is_decoder(fn) else "factory").get(name)
        if op is None:
            raise ValueError(f"the {self.form.label} form has no operation {name!r}")
        e, mark = self.expects[hid], triton_mode.launch_mark()
        try:
            out = op.run(self, fn, e, *args)
        except Fault:
            self._interpreted(mark, e)
            raise
        self._interpreted(mark, e)
        return out

    @staticmethod
    def _interpreted(mark: int, e: Expect) -> None:
        """A call that ran Triton kernels in the interpreter, in a dtype the interpreter miscomputes, is not the code
        under test's to answer for (a kernel its launcher reaches only in this call, a backward pass): Unsupported,
        which declines the case, whatever the call returned or raised."""
        if triton_mode.launched_since(mark) and (fault := triton_mode.interpreter_fault(e.dtype)):
            raise Unsupported(fault)

    # conversions ---------------------------------------------------------------------------------
    def native(self, x, positions, e: Expect):
        """Float64 rows and int64 positions as the implementation's arrays, in its dtype and on its device."""
        return arrays.to_native(x, np.asarray(positions, dtype=np.int64), self.array, e.dtype, self.device)

    def native_positions(self, positions, e: Expect):
        return self.native(np.zeros((len(np.atleast_1d(positions)), 1)), np.atleast_1d(positions), e)[1] \
            if np.ndim(positions) <= 1 else self.native(np.zeros((1, 1)), positions, e)[1]

    def rows(self, out, e: Expect, shape: tuple[int, ...], rows=None) -> np.ndarray:
        """A result checked (kind, dtype, shape: a ``shape`` Fault otherwise) and converted to float64."""
        try:
            return arrays.from_native(out, self.array, shape, e.dtype, rows)
        except arrays.ShapeMismatch as err:
            raise Fault(str(err), "shape", cause=CONTRACT_SHAPE) from None
        except arrays.ArrayError as err:
            raise Fault(str(err), "shape") from None


class Watchdog:
    """In-process only: runs calls with a time limit on one daemon thread of its own, started at the first call and
    reused (a thread per call costs more than a small call). A call past the limit is a ``timeout`` Fault; Python
    cannot stop the thread, so every later call fails at once rather than hang again (this is why implementations
    run in a worker process whenever they can)."""

    def __init__(self, timeout: float | None):
        self.timeout = timeout
        self.hung: str | None = None
        self._calls: queue.SimpleQueue | None = None

    def _serve(self, calls: queue.SimpleQueue) -> None:
        while True:
            fn, args, box, done = calls.get()
            try:
                box["value"] = fn(*args)
            except BaseException as e:  # handed to the caller's thread
                box["error"] = e
            done.set()

    def run(self, what: str, fn: Callable, *args):
        if self.hung:
            raise Fault(f"not called: an earlier call did not return ({self.hung}); the implementation runs "
                        "in-process, where a hung call cannot be stopped", "timeout")
        if not self.timeout:
            return fn(*args)
        if self._calls is None:
            self._calls = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(self._calls,), daemon=True, name="ropespec-call").start()
        box: dict = {}
        done = threading.Event()
        self._calls.put((fn, args, box, done))
        if not done.wait(self.timeout):
            self.hung = f"{what} ran past {self.timeout:g} s"
            raise Fault(f"{what} did not return within {self.timeout:g} s (--timeout)", "timeout")
        if "error" in box:
            raise box["error"]
        return box["value"]
