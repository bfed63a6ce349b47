"""implementations: what is UNDER TEST — the plug-in contract and loader, the shipped
implementations, adapters, and ``zoo/`` (known-buggy implementations).

Imports ``spec`` (the expectation schema) and nothing else of ropespec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from implementations import arrays
from implementations.contract import (
    Bound,
    Call,
    Failure,
    Fault,
    Subject,
    Target,
    TargetError,
    Unsupported,
    _mode_of,
    load_target,
)
from spec.expectation import DEFAULT, Expect


@dataclass(frozen=True)
class Shipped:
    name: str
    target: str
    array: str
    dtypes: tuple[str, ...]
    kind: str = "rope"


#: The implementations ropespec ships, each a factory, with the dtypes each is checked at.
SHIPPED = (
    Shipped("stdlib", "implementations.stdlib_rope:make", "list", ("float64",)),
    Shipped("numpy", "implementations.numpy_rope:make", "numpy", ("float64", "float32")),
    Shipped("torch", "implementations.torch_rope:make", "torch", ("float32", "float16", "bfloat16")),
    Shipped("numpy-decode", "implementations.numpy_decode:make", "numpy", ("float64",)),
    Shipped("sinusoidal", "implementations.sinusoidal:make", "numpy", ("float64",), "sinusoidal"),
    Shipped("integer-index", "implementations.toy_encodings:integer_index", "numpy", ("float64",), "sinusoidal"),
    Shipped("length-normalised", "implementations.toy_encodings:length_normalised", "numpy", ("float64",), "sinusoidal"),
    Shipped("binary", "implementations.toy_encodings:binary", "numpy", ("float64",), "sinusoidal"),
    Shipped("learned", "implementations.learned:make", "numpy", ("float64",), "learned"),
    Shipped("attention", "implementations.attention:make", "numpy", ("float64",), "attention"),
    Shipped("attention-decode", "implementations.attention_decode:make", "numpy", ("float64",), "attention"),
)

#: what each kind of implementation is called with (ropespec check --family)
KINDS = ("rope", "sinusoidal", "learned", "attention")


def make_subject(
    target: str | Callable,
    *,
    expect: Expect | None = None,
    array: str = "numpy",
    dtype: str | None = None,
    max_position: int | None = None,
    device: str = "cpu",
    name: str | None = None,
    timeout: float | None = None,
    kind: str = "rope",
) -> Subject:
    """A Subject for TARGET (a target string or the callable itself). Raises TargetError when TARGET
    cannot be loaded.

    A plain function is checked against ``expect`` (default: :data:`spec.DEFAULT`); a factory against
    ``expect`` when given, else against expectations the suite draws. ``dtype`` and
    ``max_position`` override the expectation's.
    """
    if callable(target):
        t = Target(getattr(target, "__qualname__", repr(target)), target, _mode_of(target))
        target = t.spec
    else:
        t = load_target(target)
    dtype = dtype or (expect.dtype if expect is not None else DEFAULT.dtype)
    if expect is None and t.mode == "plain":
        expect = DEFAULT
    changes = {"dtype": dtype}
    if max_position is not None:
        changes["max_position"] = max_position
    if expect is not None:
        expect = expect.replace(**changes)
    mp = expect.max_position if expect is not None else (max_position or DEFAULT.max_position)
    subject = Subject(
        name=name or f"{target}-{dtype}",
        target=target,
        mode=t.mode,
        obj=t.obj,
        array=array,
        dtype=dtype,
        max_position=mp,
        expect=expect,
        device=device,
    )
    _check_arity(t, kind)
    subject.kind = kind
    subject.expected_failures = dict(getattr(t.obj, "expected_failures", {}))
    if timeout is not None:
        subject.timeout = timeout or None  # 0: no limit
    subject.skip_reason = arrays.unsupported_reason(array, dtype, device)
    if subject.skip_reason is None and t.mode == "factory":
        # A factory that declines the subject's dtype outright is skipped as a whole; binding once
        # also tells a decode-mode factory (prefill/step objects) from a plain one.
        probe = (expect or DEFAULT).replace(dtype=dtype)
        try:
            subject.bind(probe)
        except Unsupported as e:
            subject.skip_reason = str(e)
        except Fault:
            pass  # reported by the properties, with its diagnosis
    return subject


#: the number of required arguments a plain (not factory) TARGET takes, per kind
_PLAIN_ARITY = {"rope": 2, "sinusoidal": 2, "attention": 5}


def _check_arity(t: Target, kind: str) -> None:
    if t.mode == "factory":
        return
    import inspect

    want = _PLAIN_ARITY.get(kind)
    if want is None:
        raise TargetError(f"{t.spec}: a {kind} TARGET is a factory make(expect)")
    try:
        params = inspect.signature(t.obj).parameters.values()
    except (TypeError, ValueError):
        return
    n = sum(1 for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if n != want:
        shape = {"rope": "(x, positions)", "sinusoidal": "(positions, d)", "attention": "(q, k, v, positions, causal)"}[kind]
        raise TargetError(f"{t.spec}: must take {shape} or (expect); its signature is {inspect.signature(t.obj)}")


def shipped_subjects(
    *, expect: Expect | None = None, dtype: str | None = None, max_position: int | None = None, device: str = "cpu",
    timeout: float | None = None,
) -> list[Subject]:
    """One Subject per shipped implementation and dtype (only ``dtype`` when given)."""
    out = []
    for s in SHIPPED:
        if expect is not None and s.kind != "rope":
            continue  # an expectation given on the command line describes RoPE
        for d in (dtype,) if dtype else s.dtypes:
            if d not in s.dtypes:
                continue
            out.append(
                make_subject(
                    s.target,
                    expect=expect,
                    array=s.array,
                    dtype=d,
                    max_position=max_position,
                    device=device,
                    name=f"{s.name}-{d}",
                    timeout=timeout,
                    kind=s.kind,
                )
            )
    return out


__all__ = [
    "SHIPPED",
    "Bound",
    "Call",
    "Failure",
    "Fault",
    "Shipped",
    "Subject",
    "Target",
    "TargetError",
    "Unsupported",
    "load_target",
    "make_subject",
    "shipped_subjects",
]
