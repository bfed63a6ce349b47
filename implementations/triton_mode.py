"""Triton kernels on a CPU: Triton's interpreter, switched on for the worker, and what the report says of it.

Triton decides at ``@triton.jit`` time whether a kernel is compiled or interpreted: ``TRITON_INTERPRET=1`` must be
in the environment when the kernel's module is imported, not merely before ``triton`` is. A worker that runs on the
CPU (``--device cpu``, the default) gets it in its environment before it imports the TARGET, unless the user set
``TRITON_INTERPRET`` themselves; the interpreter runs the kernel on CPU tensors (numpy underneath), one program
instance at a time. Where a launcher enters ``torch.cuda.device(x.device.index)`` for a CPU tensor (flash-attention's
``apply_rotary``), torch raises a TypeError; in interpreter mode that call is a no-op for a CPU tensor's device.

Wherever the worker ran a kernel in the interpreter (however it is wrapped and whichever module defines it), what the
interpreter computes wrongly in a dtype is ropespec's to say, never the code under test's: the interpreter's launches
are recorded (:func:`watch_launches`), and a dtype its canary finds miscomputed (:func:`interpreter_fault`) is not
judged. Reading modules (:func:`kernels`) names the kernels in the report's header.
"""

from __future__ import annotations

import contextlib
import os
import sys

ENV = "TRITON_INTERPRET"


def environment(env: dict, device: str) -> dict:
    """The worker's environment: ``env`` with Triton's interpreter on for a CPU device, unless the user set it."""
    if device == "cpu" and ENV not in env:
        return {**env, ENV: "1"}
    return env


def interpreting() -> bool:
    return os.environ.get(ENV, "0") not in ("", "0")


#: packages whose kernels are not the TARGET's: Triton's own library, and torch's generated ones
NOT_THE_TARGETS = ("triton", "torch")
#: ropespec's canary of the interpreter (interpreter_fault), never the TARGET's
CANARY = "ropespec.implementations.triton_canary"
#: the interpreter's module: every kernel it runs, however wrapped (jit, heuristics, autotune, nested), is launched
#: through its InterpretedFunction.run
INTERPRETER = "triton.runtime.interpreter"


def _label(mod) -> str:
    """A module as the user knows it: a TARGET loaded from a file by the file's name."""
    if mod.__name__.startswith("_ropespec_target_") and getattr(mod, "__file__", None):
        return os.path.basename(mod.__file__)
    return mod.__name__


def _theirs(module: str | None) -> bool:
    """Whether kernels defined in ``module`` are the code under test's: not Triton's, torch's or the canary's."""
    return bool(module) and module.split(".")[0] not in NOT_THE_TARGETS and module != CANARY


# -- the interpreter's launches, measured ------------------------------------------------------------------
# Naming kernels by reading modules misses what a library reaches in ways no scan follows (a module imported before
# the TARGET, kernels imported when a launcher first runs); whether the interpreter ran a kernel is measured instead,
# at its one launch entry point, so that its faults are never taken for the code under test's.
_launches = [0]
_launched: dict[int, tuple] = {}  # id of the interpreted kernel -> (the kernel, the count at its latest launch)


def _record(kernel) -> None:
    if getattr(getattr(kernel, "fn", None), "__module__", None) == CANARY:
        return
    _launches[0] += 1
    _launched[id(kernel)] = (kernel, _launches[0])


def _watch(interpreter) -> None:
    """Record every launch of ``interpreter``'s InterpretedFunction.run (before it runs: a launch that raises ran)."""
    cls = getattr(interpreter, "InterpretedFunction", None)
    if cls is None or getattr(cls.run, "_ropespec_watched", False):
        return
    run = cls.run

    def watched(self, *args, **kwargs):
        if not kwargs.get("warmup"):
            _record(self)
        return run(self, *args, **kwargs)

    watched._ropespec_watched = True
    cls.run = watched


class _WatchWhenImported:
    """A finder of the interpreter's module only: the module found by the other finders, watched once executed."""

    def find_spec(self, name, path, target=None):
        if name != INTERPRETER:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                execute = spec.loader.exec_module

                def exec_module(module):
                    execute(module)
                    _watch(module)

                spec.loader.exec_module = exec_module
                return spec
        return None


def watch_launches() -> None:
    """In a process where the interpreter is on, record the kernels it launches from now on (:func:`launched_since`):
    at once where Triton is imported, else when it is. Elsewhere nothing: a compiled run is not observed."""
    if not interpreting():
        return
    if INTERPRETER in sys.modules:
        _watch(sys.modules[INTERPRETER])
    elif not any(isinstance(f, _WatchWhenImported) for f in sys.meta_path):
        sys.meta_path.insert(0, _WatchWhenImported())


def launch_mark() -> int:
    """How many launches were recorded so far: what :func:`launched_since` counts from."""
    return _launches[0]


def launched_since(mark: int) -> list:
    """The interpreted kernels launched after ``mark`` (:func:`launch_mark`), each once."""
    return [kernel for kernel, n in _launched.values() if n > mark]


# -- the kernels, named ----------------------------------------------------------------------------------------
def _is_kernel(value) -> bool:
    from triton.runtime.jit import KernelInterface

    return isinstance(value, KernelInterface) or type(value).__name__ == "InterpretedFunction"


def _innermost(value):
    """The kernel that runs under every wrapper (a Heuristics', an Autotuner's ``.fn``, however nested): the
    JITFunction or InterpretedFunction whose ``.fn`` is the Python function."""
    for _ in range(32):
        inner = getattr(value, "fn", None)
        if not _is_kernel(inner):
            return value
        value = inner
    return value


def _home(kernel) -> str | None:
    """The module that defines an innermost kernel's Python function."""
    return getattr(getattr(kernel, "fn", None), "__module__", None)


def kernels(modules, launched=()) -> list[str]:
    """The Triton kernels (compiled or interpreted, however wrapped) that ``modules`` hold and the interpreted kernels
    ``launched`` (:func:`launched_since`), each once, as "module.name" of the module that defines it: by the name that
    module gives it, else by its function's. Triton's, torch's and the canary's are not named. Nothing when triton is
    not imported."""
    if "triton" not in sys.modules:
        return []
    import warnings

    found: dict[int, tuple[bool, str]] = {}  # id of the innermost kernel -> (named by its own module, name)

    def name(kernel, home: str, attribute: str, own: bool) -> None:
        known = found.get(id(kernel))
        if known is None or own and not known[0]:
            mod = sys.modules.get(home)
            found[id(kernel)] = (own, f"{_label(mod) if mod is not None else home}.{attribute}")

    with warnings.catch_warnings():  # reading a module's attributes must not print the module's deprecations
        warnings.simplefilter("ignore")
        for mod in {id(m): m for m in modules}.values():
            if not _theirs(mod.__name__):
                continue
            for attribute, value in list(vars(mod).items()):
                if not _is_kernel(value):
                    continue
                kernel = _innermost(value)
                home = _home(kernel)
                if _theirs(home):
                    own = home == mod.__name__
                    name(kernel, home, attribute if own else getattr(kernel.fn, "__name__", attribute), own)
    for kernel in launched:
        home = _home(kernel)
        if _theirs(home) and id(kernel) not in found:
            name(kernel, home, getattr(kernel.fn, "__name__", "?"), False)
    return [n for _, n in found.values()]


def cuda_device_noop() -> bool:
    """In interpreter mode, make ``torch.cuda.device(index)`` a no-op for a CPU tensor's device (index None, or a
    CPU device): launchers that enter it would raise on a CPU tensor. Returns whether it did."""
    torch = sys.modules.get("torch")
    if torch is None or not interpreting() or getattr(torch.cuda.device, "_ropespec_noop", False):
        return False
    original = torch.cuda.device

    def device(index):
        if index is None or (isinstance(index, torch.device) and index.type == "cpu"):
            return contextlib.nullcontext()
        return original(index)

    device._ropespec_noop = True
    torch.cuda.device = device
    return True


#: the dtypes the canary is run for: those whose arithmetic the interpreter emulates (float32 and float64 are numpy's own)
CANARY_DTYPES = ("bfloat16", "float16")


def _cache_path() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "ropespec", "triton-interpreter.json")


def interpreter_fault(dtype: str) -> str | None:
    """Why a Triton kernel cannot be judged in ``dtype`` under this Triton's interpreter, or None when it can: the
    canary kernel (:mod:`ropespec.implementations.triton_canary`) says whether the interpreter computes the dtype at all. The
    answer is cached per triton and torch version (a canary costs a second of interpreting); only in a process where
    the interpreter is on."""
    if dtype not in CANARY_DTYPES or not interpreting() or "triton" not in sys.modules:
        return None
    import json

    import torch
    import triton

    key = f"triton {triton.__version__}, torch {torch.__version__}"
    path = _cache_path()
    try:
        with open(path, encoding="utf-8") as fh:
            known = json.load(fh)
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    seen = known.get(key, {})
    if dtype in seen:
        wrong = seen[dtype]
    else:
        from ropespec.implementations import triton_canary

        try:
            wrong = triton_canary.fault(dtype)
        except Exception as e:  # noqa: BLE001 - an interpreter that cannot run the canary cannot judge the dtype
            wrong = f"the canary kernel raised {type(e).__name__}: {e}"
        known[key] = {**seen, dtype: wrong}
        try:  # written whole or not at all: a torn cache file would be read as no cache
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(known, fh)
            os.replace(tmp, path)
        except OSError:
            pass
    if wrong is None:
        return None
    return (f"not checked in {dtype}: Triton {triton.__version__}'s interpreter miscomputes {dtype} ({wrong}), so "
            f"its kernels cannot be judged in {dtype} here, and no fault of theirs is reported; check {dtype} on a GPU "
            f"(--device cuda), or another dtype here")


def describe(found: list[str], patched: bool, launched_from: str | None = None) -> list[str]:
    """What the report's header says of the TARGET's Triton kernels: those ``found``; where none could be named but the
    interpreter ran kernels, that they were ``launched_from`` the TARGET."""
    if not found and not launched_from:
        return []
    modules: dict[str, int] = {}
    for k in found:
        module = k.rpartition(".")[0]
        modules[module] = modules.get(module, 0) + 1
    kernels_ = lambda n: f"{n} kernel{'s' * (n > 1)}"  # noqa: E731
    if len(modules) <= 3:
        shown = ", ".join(f"{kernels_(count)} of {module}" for module, count in modules.items())
    else:  # a library that imports all its kernels (liger_kernel.ops): counted per package, not listed
        packages: dict[str, list[int]] = {}
        for module, count in modules.items():
            n = packages.setdefault(module.split(".")[0], [0, 0])
            n[0], n[1] = n[0] + count, n[1] + 1
        shown = ", ".join(f"{kernels_(k)} in {m} modules of {p}" for p, (k, m) in packages.items())
    if not found:
        shown = f"launched from {launched_from}"
    if interpreting():
        out = [f"Triton kernels run in Triton's interpreter ({shown}; one program instance at a time)"]
        if patched:
            out.append("torch.cuda.device(...) of a CPU tensor is a no-op there")
        return out
    return [f"Triton kernels are compiled ({shown}): {ENV} was set to 0, so they need a GPU"]
