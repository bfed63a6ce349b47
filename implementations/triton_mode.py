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
            if mod.__name__.split(".")[0] in NOT_THE_TARGETS:
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
