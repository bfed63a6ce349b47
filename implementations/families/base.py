"""What a form of a family declares, once: how it is called, on both sides of the process boundary.

A :class:`Form` says what a plain function of it takes, the warm-up call made before the first timed one, the
operations it offers across the process boundary (each run in the implementation's process by the host, with the
conversions and checks of :class:`ropespec.implementations.boundary.host.Host`), the :class:`Bound` the properties hold, how a property
reads it as a RoPE f(x, positions) where diagnoses, the fingerprint and the precision sweep need that, and which
invariants it answers. Each family's module registers its forms; :func:`form_of` finds one for a call shape.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ropespec.spec import families, layouts
from ropespec.spec.expectation import Expect
from ropespec.spec.glossary import FORMS


@dataclass(frozen=True)
class Op:
    """One operation across the process boundary: ``run(host, fn, expect, *args)`` in the implementation's process,
    taking and returning float64 arrays; ``says`` is how the call reads in a message ("kernel(x, cos, sin)");
    ``handed(shape, *args)``: the positions the call hands the implementation, read from the same arguments (a list
    of int arrays, a multi-axis RoPE's with its axes last), which the domain rule bounds (:func:`guard_domain`)."""

    run: Callable
    says: str
    handed: Callable | None = None


class DomainError(Exception):
    """A call ropespec was about to make with a position outside the implementation's domain
    (:meth:`ropespec.spec.expectation.Expect.outside_domain`): a bug of the suite's, never the implementation's, so the call is
    not made and the property is an error of ropespec's."""


def handed_positions(bound: "Bound", name: str, args: tuple) -> list[np.ndarray]:
    """The positions the operation ``name`` with ``args`` hands the implementation (empty for one that takes none)."""
    form = form_of(bound.host.shape)
    op = form.ops.get(name) or form.decoder_ops.get(name)
    if op is None or op.handed is None:
        return []
    return [np.asarray(p) for p in op.handed(bound.host.shape, *args)]


def guard_domain(bound: "Bound", name: str, args: tuple) -> None:
    """No call is ever made with a position outside the domain: ropespec refuses it before it is made, as an error of
    its own (DomainError, naming the operation and the position), never a verdict on the implementation."""
    for p in handed_positions(bound, name, args):
        outside = bound.expect.outside_domain(p)
        if outside:
            raise DomainError(f"ropespec was about to call {form_of(bound.host.shape).says(name)} with {outside} "
                              f"(the domain of {bound.expect.max_position} positions): a bug of ropespec's, not of "
                              f"the implementation; the call was not made")


class Bound:
    """An implementation bound to one expectation, as the properties see it: every method takes and returns float64
    numpy arrays. The calls happen in the implementation's host (a worker process), which converts, checks and
    reports what came back. Each form adds the methods of its own calls."""

    def __init__(self, host, hid: int, expect: Expect, array: str, device: str = "cpu"):
        self.host = host
        self.hid = hid
        self.expect = expect
        self.array = array
        self.device = device

    def _op(self, name: str, *args):
        guard_domain(self, name, args)
        return self.host.op(self.hid, name, *args)


def f64(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


def i64(v) -> np.ndarray:
    return np.asarray(v, dtype=np.int64)


#: the default form, every family's own apply function (the first of ropespec.spec.glossary.FORMS)
DEFAULT_FORM = next(iter(FORMS))


@dataclass(frozen=True)
class Form:
    family: str
    name: str
    #: the required positional arguments a plain function takes (one count, or several accepted), and how they read;
    #: None: only a factory make(expect) is this form
    signature: tuple[tuple[int, ...], str] | None
    #: invariant ids it answers, as patterns ("rope.*")
    invariants: tuple[str, ...]
    ops: dict[str, Op]
    #: the warm-up call, ``warmup(host, fn, expect)``: one small call whose result is not judged
    warmup: Callable[[Any, Any, Expect], None]
    bound: type = Bound
    #: the implementation as f(x, positions) for the diagnoses, the fingerprint and the precision sweep:
    #: ``as_rope(bound)``, or None for a family that is no RoPE
    as_rope: Callable[[Bound], Callable] | None = None
    #: whether the RoPE diagnoses name its failures (a kernel's properties name theirs from their own evidence)
    diagnosed: bool = False
    #: a decoder of this form (a factory returning prefill/step objects): what it answers, offers and is held as
    decoder_invariants: tuple[str, ...] = ()
    decoder_ops: dict[str, Op] = field(default_factory=dict)
    decoder_bound: type | None = None
    #: a one-argument function that is plain, not a factory (a table builder whose argument is named positions)
    plain_if: Callable[[Callable], bool] | None = None
    #: it is handed a cos/sin table as arguments (a kernel): ``--table`` names the library's own table builder, and
    #: without one it is handed ropespec's
    handed_a_table: bool = False
    #: a function handed a table and its library's table builder as one f(x, positions): ``piped(kernel, table,
    #: layout)`` (``--table``)
    piped: Callable[[Callable, Callable, str], Callable] | None = None
    #: it may write its result into its input (``--inplace``)
    writes_in_place: bool = False
    #: how a message names a function of this form ("vLLM's forward")
    says_itself: str = ""
    #: the layouts it is called in (ropespec.spec.layouts): the first is the default, one call of unbatched rows
    layouts: tuple[str, ...] = ("nd",)
    #: the layout its calls lay out their rows in whatever ``--layout`` says (vLLM's forward: "vllm"), or None
    rows: str | None = None
    #: it is called on q and k together, each (batch, heads, seq, head_dim), with their table (transformers'
    #: apply(q, k, cos, sin)), not on one x
    q_and_k: bool = False
    #: how its layouts read in an option's message ("RoPE apply functions")
    layouts_of: str = ""
    #: the plain signature in a layout whose calls take other arguments (thd's cu_seqlens)
    layout_signatures: dict[str, tuple[tuple[int, ...], str]] = field(default_factory=dict)
    #: what a factory of it returns where that is no function (a model object): ``(is it, what it is in words)``
    builds: tuple[Callable[[Any], bool], str] | None = None

    def __post_init__(self) -> None:
        families.get(self.family)  # a form belongs to a registered family
        for name in self.layouts + ((self.rows,) if self.rows else ()):
            layouts.get(name)

    @property
    def applies(self) -> bool:
        """The family's own apply function (the default form), not a table, a kernel or another library's call."""
        return self.name == DEFAULT_FORM

    @property
    def of(self) -> families.Family:
        """Its family: what the spec knows of it (its expectation's fields, how a report says it)."""
        return families.get(self.family)

    def signature_in(self, layout: str) -> tuple[tuple[int, ...], str] | None:
        return self.layout_signatures.get(layout, self.signature)

    @property
    def key(self) -> tuple[str, str]:
        return self.family, self.name

    @property
    def label(self) -> str:
        return self.family if self.applies else f"{self.family} {self.name}"

    def answers(self, invariant: str, mode: str) -> bool:
        """Whether the invariant is about an implementation of this form in this mode."""
        patterns = self.decoder_invariants if mode == "decoder" else self.invariants
        return any(fnmatch.fnmatchcase(invariant, p) for p in patterns)

    def operations(self, mode: str) -> dict[str, Op]:
        return {**self.ops, **self.decoder_ops} if mode == "decoder" else self.ops

    def says(self, op: str) -> str:
        found = self.ops.get(op) or self.decoder_ops.get(op)
        return found.says if found else op


REGISTRY: dict[tuple[str, str], Form] = {}


def register(*forms: Form) -> None:
    for f in forms:
        if f.key in REGISTRY:
            raise ValueError(f"form {f.key} registered twice")
        REGISTRY[f.key] = f


def form_of(shape) -> Form:
    """The form of a call shape (ropespec.implementations.shape.CallShape): a kernel with its table is an apply function."""
    try:
        return REGISTRY[shape.checked_as]
    except KeyError:
        raise ValueError(f"no form {shape.checked_as[1]} of the {shape.checked_as[0]} family") from None


def forms_of(family: str) -> dict[str, Form]:
    """A family's forms, by name."""
    return {f.name: f for f in REGISTRY.values() if f.family == family}


def forms_called(name: str) -> list[Form]:
    """The forms of that name, one per family that has one."""
    return [f for f in REGISTRY.values() if f.name == name]


def forms_writing_in_place() -> list[Form]:
    return [f for f in REGISTRY.values() if f.writes_in_place]


def forms_in_layout(layout: str) -> list[Form]:
    """The forms called in a layout (ropespec.spec.layouts)."""
    return [f for f in REGISTRY.values() if layout in f.layouts]


def forms_answering(invariant: str) -> list[Form]:
    """Every form (and decoder) that answers an invariant: what the rendered spec lists for it."""
    return [f for f in REGISTRY.values() if f.answers(invariant, "factory") or f.answers(invariant, "decoder")]
