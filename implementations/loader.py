"""Loading an implementation: TARGET (a string or the callable itself) into a :class:`Implementation` whose host is a worker
process, or, for a callable no other process can load, the caller's own process."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field, fields, replace
from typing import Callable

from ropespec.implementations.contract import (
    CONTRACT_SHAPE,
    DEFAULT_TIMEOUT,
    DEFAULT_WARMUP_TIMEOUT,
    FATAL,
    Fault,
    TargetError,
    Unsupported,
    machine_memory,
)
from ropespec.implementations.boundary.client import InProcessHost
from ropespec.implementations.boundary.targets import installed_target
from ropespec.implementations.implementation import Implementation
from ropespec.implementations.boundary.workers import WorkerHost
from ropespec.implementations.shape import CallShape
from ropespec.spec import families
from ropespec.spec.expectation import DEFAULT, Expect


def reference_of(fn: Callable) -> tuple[dict | None, str | None]:
    """How a worker process can load the callable ``fn``: ``({"module", "file", "qualname"}, None)``, or
    ``(None, why)`` when no other process can (a lambda, a closure, a function defined in ``__main__``,
    a bound method or partial): such a callable is run in-process."""
    mod, qn = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not isinstance(qn, str) or not isinstance(mod, str):
        return None, f"a {type(fn).__name__} object has no importable name"
    if mod == "__main__":
        return None, "it is defined in __main__ (a script, a notebook or the interactive prompt)"
    module = sys.modules.get(mod)
    obj = module
    for part in qn.split("."):
        obj = getattr(obj, part, None)
    if module is None or obj is not fn:
        # the name a user would import it by: the module attribute that is this very object (a decorator's
        # wrapper carries the decorator's qualified name, _keep_dtype.<locals>.wrapped, but sits at the name it
        # decorated)
        names = [k for k, v in vars(module).items() if v is fn] if module is not None else []
        if not names:
            if "<lambda>" in qn:
                return None, "a lambda has no importable name"
            if "<locals>" in qn:
                return None, "it is defined inside a function"
            return None, f"{mod}.{qn} does not name this object"
        qn = getattr(fn, "__name__", None) if getattr(fn, "__name__", None) in names else names[0]
    file = getattr(module, "__file__", None)
    if mod.startswith("_ropespec_target_"):
        mod = None  # loaded from its file by ropespec
    if mod is None and not file:
        return None, "its module has no file"
    return {"module": mod, "file": file, "qualname": qn}, None


def _loadable_label(ref: dict) -> str:
    """A TARGET string for a function's reference: its file (relative to the working directory when
    inside it), else its module, and its qualified name."""
    if ref.get("file"):
        path = os.path.abspath(ref["file"])
        rel = os.path.relpath(path)
        return f"{rel if not rel.startswith('..') else path}:{ref['qualname']}"
    return f"{ref['module']}:{ref['qualname']}"


@dataclass(frozen=True)
class LoadRequest:
    """What to load, before it is loaded: one implementation (a TARGET, or the callable itself) in one configuration.
    The one record of it, whoever asks: the shipped implementations and TARGETs of a run
    (:func:`ropespec.inputs.load_requests`), each cell of a configuration matrix, the zoo's members, a ``-j`` runner's
    job and a cluster's task. Its fields are :func:`load_implementation`'s arguments; :meth:`load` loads it."""

    target: str | Callable
    name: str | None = None
    array: str = "numpy"
    dtype: str | None = None
    expect: Expect | None = None
    max_position: int | None = None
    device: str = "cpu"
    timeout: float | None = None
    warmup_timeout: float | None = None
    shape: CallShape = CallShape()
    isolate: bool | None = None
    memory_limit: int | None = None
    #: its place in a configuration matrix, as the report says it; None outside a matrix
    configuration: dict | None = field(default=None, hash=False)

    def load(self) -> Implementation:
        """The implementation, loaded in its worker process (or in-process: :func:`load_implementation`)."""
        return load_implementation(**{f.name: getattr(self, f.name) for f in fields(self)})

    @property
    def on_gpu(self) -> bool:
        """Whether it runs on a CUDA device (a cluster gives its task a GPU)."""
        return str(self.device or "cpu").startswith("cuda")

    def placeholder(self) -> Implementation:
        """An Implementation standing for it where it never loaded (its runner died): what a report names."""
        return Implementation(name=self.name, target=str(self.target), mode="unknown", array=self.array,
                              dtype=self.dtype or "float32", max_position=self.max_position or 0)


def load_implementation(
    target: str | Callable,
    *,
    expect: Expect | None = None,
    array: str = "numpy",
    dtype: str | None = None,
    max_position: int | None = None,
    device: str = "cpu",
    name: str | None = None,
    timeout: float | None = None,
    warmup_timeout: float | None = None,
    shape: CallShape = CallShape(),
    isolate: bool | None = None,
    memory_limit: int | None = None,
    configuration: dict | None = None,
) -> Implementation:
    """A Implementation for TARGET (a target string or the callable itself), loaded in its own worker process
    (see :mod:`ropespec.implementations.boundary.workers`). Raises TargetError when TARGET cannot be loaded.

    A callable that no other process can load (``isolate`` None: decided by :func:`reference_of`), or
    any callable with ``isolate=False``, runs in-process; the implementation's ``isolation`` says which.
    A plain function is checked against ``expect`` (default: :data:`spec.DEFAULT`); a factory against
    ``expect`` when given, else against expectations the suite draws. ``dtype`` and
    ``max_position`` override the expectation's. ``timeout`` and ``warmup_timeout``: seconds (0: no limit).
    ``memory_limit``: bytes of data the worker process may hold (None: :func:`default_memory_limit`; 0: no limit).
    ``shape``: how the properties call it (:class:`ropespec.implementations.shape.CallShape`). ``configuration``: its place
    in a configuration matrix, as the report says it.
    """
    target = installed_target(target)
    if isinstance(shape.table, str):
        shape = replace(shape, table=installed_target(shape.table))
    table = shape.table
    if callable(table):  # a worker loads it by its reference; one no other process can load runs in-process
        tref, why_not = reference_of(table)
        if tref is None:
            if not callable(target):
                raise TargetError(f"--table: {shape.table_label} cannot be loaded by another process ({why_not}); hand "
                                  f"the TARGET over as a function too, to check both in this process")
            isolate = False
        elif isolate is not False:
            shape = replace(shape, table=tref, table_label=_loadable_label(tref))

    memory_limit = default_memory_limit() if memory_limit is None else (memory_limit or None)
    timeout = DEFAULT_TIMEOUT if timeout is None else (timeout or None)
    warmup_timeout = DEFAULT_WARMUP_TIMEOUT if warmup_timeout is None else (warmup_timeout or None)
    dtype = dtype or (expect.dtype if expect is not None else DEFAULT.dtype)
    host, label, isolation = _host_for(target, shape, array, device, timeout, warmup_timeout, memory_limit, isolate)
    info, load_fault = _loaded(host, label, dtype)
    mode = info["mode"]
    problem = families.get(shape.family).load_problem(mode, expect)
    if problem:
        raise TargetError(f"{label}: {problem}")
    if expect is None and mode == "plain":
        expect = DEFAULT
    changes = {"dtype": dtype}
    if max_position is not None:
        changes["max_position"] = max_position
    if expect is not None:
        expect = expect.replace(**changes)
    mp = expect.max_position if expect is not None else (max_position or DEFAULT.max_position)
    impl = Implementation(
        name=name or f"{label}-{dtype}",
        target=label,
        mode=mode,
        array=array,
        dtype=dtype,
        max_position=mp,
        expect=expect,
        device=device,
        shape=shape,
        expected_failures=dict(info["expected_failures"]),
        promise=dict(info.get("promise") or {}),
        axes=tuple(info.get("axes") or ()),
        notes=list(info.get("notes") or ()),
        configuration=configuration,
        timeout=timeout,
        warmup_timeout=warmup_timeout,
        isolation=isolation,
        load_fault=load_fault,
        host=host,
    )
    impl.skip_reason = info["skip_reason"]
    bound = None
    if impl.skip_reason is None and load_fault is None and mode == "factory":
        # A factory that declines the implementation's dtype outright is skipped as a whole; binding once
        # also tells a factory of decoders (prefill/step objects) from one of functions: the mode is fixed here.
        probes = [expect] if expect is not None else families.get(shape.family).first_bound()
        for probe in probes:  # each until one is taken (a factory of one model's position rules declines the others')
            try:
                bound = impl.bind(probe.replace(dtype=dtype))
                impl.skip_reason = None
                break
            except Unsupported as e:
                impl.skip_reason = str(e)
            except Fault as e:
                if e.cause == CONTRACT_SHAPE:  # it is no factory: neither form the contract takes, one line
                    impl.close()
                    raise TargetError(f"{label}: {e.message}") from None
                impl.skip_reason = None
                break  # reported by the properties, with its diagnosis
    elif impl.skip_reason is None and load_fault is None and mode == "plain":
        try:
            bound = impl.bind(expect)
        except (Unsupported, Fault):
            bound = None  # reported by the properties
    if impl.skip_reason is not None:
        impl.close()
    elif bound is not None and impl.mode != "decoder":
        _check_warmup(impl, bound, label)
    return impl


def _check_warmup(impl: Implementation, bound, label: str) -> None:
    """The warm-up call, made here before any property: where it shows TARGET is not the function its contract
    describes (a result of another shape, an error naming another array library's attribute), it is one line and
    exit 2 (TargetError), not a failure of every property (llm-foundry's ``build_alibi_bias(n_heads, seq_len,
    full=True)``, taken in MPT's signature, returns (1, h, L, L) and was called until it asked for 64 GiB). A warm-up
    that hangs or crashes is left to the properties, which give it its word. Where it ran Triton kernels in the
    interpreter, the header says so, and a dtype the interpreter miscomputes skips the implementation, as at load."""
    try:
        said = impl.host.warmup_verdict(bound.hid)
    except Fault:
        return
    except Unsupported as e:  # the warm-up call is declined: nothing of this family applies to TARGET
        impl.skip_reason = str(e)
        impl.close()
        return
    for note in said.get("notes") or ():  # Triton kernels that the warm-up call imported or ran
        if note not in impl.notes:
            impl.notes.append(note)
    if said.get("said"):
        impl.close()
        raise TargetError(f"{label}: {said['said']}")
    if said.get("skip_reason"):  # they ran in Triton's interpreter, in a dtype it miscomputes: not judged here
        impl.skip_reason = said["skip_reason"]
        impl.close()


def _host_for(target, shape: CallShape, array: str, device: str, timeout, warmup_timeout, memory_limit, isolate):
    """(the host TARGET runs in, the label a replay command loads it by, what the isolation is)."""
    if not callable(target):
        return (WorkerHost({"target": target}, target, shape=shape, array=array, device=device, timeout=timeout,
                           warmup_timeout=warmup_timeout, memory_limit=memory_limit), target, "worker process")
    label = getattr(target, "__qualname__", None) or repr(target)
    ref, why = reference_of(target)
    if isolate is False:
        ref, why = None, "isolate=False"
    if ref is None:
        return (InProcessHost(target, label, why=why, shape=shape, array=array, device=device, timeout=timeout,
                              warmup_timeout=warmup_timeout), label, f"in-process ({why})")
    label = _loadable_label(ref)  # what a replay command can load again
    return (WorkerHost(ref, label, shape=shape, array=array, device=device, timeout=timeout,
                       warmup_timeout=warmup_timeout, memory_limit=memory_limit), label, "worker process")


def _loaded(host, label: str, dtype: str) -> tuple[dict, Fault | None]:
    """What loading TARGET in its host says (mode, declared failures, ...), and the fault that ended or stalled the
    load, if one did (every property then fails with it); TargetError when TARGET does not load."""
    try:
        info = host.load(dtype)
    except Fault as e:
        if e.diagnosis not in FATAL:
            host.close()
            raise TargetError(f"{label}: import failed: {e.message}") from None
        return {"mode": "unknown", "expected_failures": {}, "error": None, "skip_reason": None}, e
    except TargetError:
        host.close()
        raise
    if info["error"]:
        host.close()
        raise TargetError(info["error"])
    return info, None


#: the share of the machine's memory one worker process may hold by default (--memory-limit)
DEFAULT_MEMORY_FRACTION = 0.5


def default_memory_limit() -> int | None:
    """Bytes of data a worker may hold unless told otherwise: half the machine's memory, so that one implementation
    cannot take the machine down (None where the system does not say how much it has)."""
    total = machine_memory()
    return int(total * DEFAULT_MEMORY_FRACTION) if total else None


def unavailable(array: str) -> str | None:
    """Why an array kind's package is not installed here (found without importing it), or None."""
    if array == "torch" and importlib.util.find_spec("torch") is None:
        return "torch is not installed (pip install torch==2.13.0)"
    if array == "jax" and importlib.util.find_spec("jax") is None:
        return "jax is not installed (pip install -e '.[jax]')"
    return None


