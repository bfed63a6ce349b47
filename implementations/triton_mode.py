"""Triton kernels on a CPU: Triton's interpreter, switched on for the worker, and what the report says of it.

Triton decides at ``@triton.jit`` time whether a kernel is compiled or interpreted: ``TRITON_INTERPRET=1`` must be
in the environment when the kernel's module is imported, not merely before ``triton`` is. A worker that runs on the
CPU (``--device cpu``, the default) gets it in its environment before it imports the TARGET, unless the user set
``TRITON_INTERPRET`` themselves; the interpreter runs the kernel on CPU tensors (numpy underneath), one program
instance at a time. Where a launcher enters ``torch.cuda.device(x.device.index)`` for a CPU tensor (flash-attention's
``apply_rotary``), torch raises a TypeError; in interpreter mode that call is a no-op for a CPU tensor's device.
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


def _label(mod) -> str:
    """A module as the user knows it: a TARGET loaded from a file by the file's name."""
    if mod.__name__.startswith("_ropespec_target_") and getattr(mod, "__file__", None):
        return os.path.basename(mod.__file__)
    return mod.__name__


def kernels(modules) -> list[str]:
    """The Triton kernels (``@triton.jit`` functions, compiled or interpreted) defined in ``modules``, each once:
    "module.name". Nothing when triton is not imported."""
    if "triton" not in sys.modules:
        return []
    import warnings

    from triton.runtime.jit import KernelInterface

    found: dict[int, str] = {}
    with warnings.catch_warnings():  # reading a module's attributes must not print the module's deprecations
        warnings.simplefilter("ignore")
        for mod in {id(m): m for m in modules}.values():
            if mod.__name__.split(".")[0] in NOT_THE_TARGETS or mod.__name__ == CANARY:
                continue
            for name, value in list(vars(mod).items()):
                if isinstance(value, KernelInterface) or type(value).__name__ == "InterpretedFunction":
                    if getattr(value, "__module__", mod.__name__) == mod.__name__ or \
                            getattr(getattr(value, "fn", None), "__module__", None) == mod.__name__:
                        found.setdefault(id(value), f"{_label(mod)}.{name}")
    return list(found.values())


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


def describe(found: list[str], patched: bool) -> list[str]:
    """What the report's header says of the TARGET's Triton kernels."""
    if not found:
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
    if interpreting():
        out = [f"Triton kernels run in Triton's interpreter ({shown}; one program instance at a time)"]
        if patched:
            out.append("torch.cuda.device(...) of a CPU tensor is a no-op there")
        return out
    return [f"Triton kernels are compiled ({shown}): {ENV} was set to 0, so they need a GPU"]
