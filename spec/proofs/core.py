"""What every proof is built from: the kinds of proof, the registry of proofs (:func:`proves`, :func:`declare`),
the checks that sympy establishes a statement (:func:`_zero`, :func:`_sign`), and the symbolic objects built from
the definitions (the RoPE map :func:`f`, the rotation :func:`R`, the expectations proofs range over)."""

from __future__ import annotations

import random
import types
from dataclasses import dataclass
from typing import Callable

import sympy as sp

from ropespec.spec import definitions, scaling
from ropespec.spec.expectation import CONVENTIONS, Expect

MAX_D = 16
SYMBOLIC, BOUNDED, BOUNDED_N, SECTIONS, DEFINITION, TESTED = (
    "symbolic", f"symbolic, d <= {MAX_D}", "symbolic, n = 3", "symbolic, listed sections", "definition", "tested only")
KINDS = (SYMBOLIC, BOUNDED, BOUNDED_N, SECTIONS, DEFINITION, TESTED)
PROVEN_KINDS = (SYMBOLIC, BOUNDED, BOUNDED_N, SECTIONS)

SYM = types.SimpleNamespace(num=sp.Rational, log=sp.log, sqrt=sp.sqrt, pi=sp.pi)

ROT = ("R: reflection", "R: doubled", "R: shear", "R: transposed", "R: plus a bias")


@dataclass(frozen=True)
class Proof:
    kind: str
    fn: Callable[[], str] | None = None  # None for definition and tested only
    about: tuple[str, ...] = ()  # the MUTATIONS under which a proven kind must fail
    note: str = ""  # for definition and tested only: why no proof, and what checks it instead


#: every invariant's proof, by its id: proven ones declared on their functions (:func:`proves`), the others here
PROOFS: dict[str, Proof] = {}


def proves(invariant: str, kind: str, about: tuple[str, ...]):
    """Declare the decorated function the proof of ``invariant``, of ``kind`` (a proven kind), failing under each of
    the MUTATIONS in ``about`` (what it is about): the proof's facts stated where it is written."""
    def deco(fn):
        if invariant in PROOFS:
            raise ValueError(f"{invariant} has two proofs")
        PROOFS[invariant] = Proof(kind, fn, tuple(about))
        return fn
    return deco


def declare(invariant: str, kind: str, note: str) -> None:
    """An invariant with no proof: it is what the definition says (DEFINITION), or a property of code the mathematics
    does not speak to (TESTED); ``note`` says why, and what checks it instead."""
    if invariant in PROOFS:
        raise ValueError(f"{invariant} has two proofs")
    PROOFS[invariant] = Proof(kind, note=note)




class ProofError(AssertionError):
    pass


def _witness(e) -> sp.Basic | None:
    """A value of ``e`` at a random point (30 digits) that is clearly not zero, or None: a non-zero
    value at one point disproves an identity, and costs far less than sympy's simplify."""
    free = sorted(e.free_symbols, key=str)
    rng = random.Random(len(free))
    point = {v: sp.Rational(rng.randint(1, 997), 331) for v in free}  # positive: fits every assumption used
    val = e.evalf(30, subs=point)
    return val if val.is_number and abs(val) > sp.Float("1e-20") else None


def _zero(expr, what: str) -> None:
    """Raise unless ``expr`` (an expression, a matrix or a list) is identically zero: expand products
    and sums of angles, use sin^2 = 1 - cos^2 (polynomial arithmetic, fast), and if something is left,
    refute it at a random point or hand it to sympy's simplify."""
    items = list(expr) if isinstance(expr, (list, tuple, sp.MatrixBase)) else [expr]
    for e in items:
        e = sp.expand(sp.expand_trig(sp.expand(e)))
        if e == 0:
            continue
        sines = e.atoms(sp.sin)
        if sines:
            e = sp.expand(e.subs({s_**2: 1 - sp.cos(s_.args[0]) ** 2 for s_ in sines}))
            if e == 0:
                continue
        w = _witness(e)
        if w is not None:
            raise ProofError(f"{what}: {w:.6g} at a random point")
        r = sp.simplify(e)
        if r != 0:
            raise ProofError(f"{what}: residual {r}")


def _sign(expr, want: str, what: str) -> None:
    """Raise unless sympy finds ``expr`` positive / negative / nonnegative from its symbols' assumptions."""
    e = sp.factor(sp.simplify(expr))
    if getattr(e, f"is_{want}") is not True:
        raise ProofError(f"{what}: {e} is not shown {want}")


# -- the objects, built from the definitions --------------------------------------------------------
p, m, n, c, a, b_ = sp.symbols("p m n c a b", real=True)
s = sp.Symbol("s", positive=True)  # a scale factor (> 0; >= 1 where said)
u = sp.Symbol("u", nonnegative=True)  # s = 1 + u: a factor >= 1
g = sp.Symbol("g", positive=True)
base, r_, L = sp.symbols("b r L", positive=True)


def thetas(k: int) -> list[sp.Symbol]:
    return [sp.Symbol(f"theta_{i}", positive=True) for i in range(k)]


def vec(name: str, d: int) -> list[sp.Symbol]:
    return list(sp.symbols(f"{name}0:{d}", real=True))


def f(expect: Expect, x, pos, th, gain=1) -> list:
    """The RoPE map of ropespec.spec.definitions on symbols: pair i turns by pos * th[i] (a multi-axis RoPE's pos is a vector,
    pair i turning with its own axis's entry, definitions.axis_angles)."""
    if expect.multi_axis:
        exact = [[sp.Rational(float(v)) for v in vs] for vs in (expect.pair_offsets(), expect.pair_scales())]
        return definitions.encode(expect, x, definitions.axis_angles(expect.pair_axes(), pos, th, *exact), sp.cos,
                                  sp.sin, gain)
    return definitions.encode(expect, x, [pos * t for t in th], sp.cos, sp.sin, gain)


def position_vec(name: str, e: Expect):
    """A symbolic position: one symbol, or one per axis of a multi-axis RoPE."""
    return list(sp.symbols(f"{name}0:{e.n_axes}", real=True)) if e.multi_axis else sp.Symbol(name, real=True)


def vadd(u_, v_):
    return [x + y for x, y in zip(u_, v_)] if isinstance(u_, list) else u_ + v_


def ladder_thetas(e: Expect, b=None) -> list:
    """The expectation's frequencies on a symbolic base: ropespec.spec.scaling.ladder at each pair's (i, R) of Expect.ladder."""
    return [scaling.ladder(b if b is not None else base, sp.Integer(i), sp.Integer(R)) for i, R in e.ladder()]


def axes_expects(kinds=("chunked", "interleaved", "per-axis", "parity")):
    """Small multi-axis expectations of each kind, in the conventions the models use them in: sections of unequal
    sizes, so that a wrong assignment of pairs to axes shows."""
    every = {
        "chunked": [Expect(head_dim=8, mrope_section=[1, 1, 2]), Expect(head_dim=12, mrope_section=[1, 2, 3],
                                                                         convention="interleaved"),
                    Expect(head_dim=12, rotary_dim=8, mrope_section=[2, 1, 1], convention="interleaved")],
        "interleaved": [Expect(head_dim=16, mrope_section=[4, 2, 2], mrope_interleaved=True)],
        "per-axis": [Expect(head_dim=12, axes_dims_rope=[2, 4, 6], convention="interleaved"),
                     Expect(head_dim=8, axes_dims_rope=[4, 4])],
        "parity": [Expect(head_dim=8, axes_parity=True)],
    }
    for k in kinds:
        yield from every[k]


def R(phi) -> sp.Matrix:
    """The 2x2 matrix of definitions.rotate at angle phi (its Jacobian)."""
    x0, x1 = sp.symbols("xi0 xi1", real=True)
    return sp.Matrix(definitions.rotate(x0, x1, sp.cos(phi), sp.sin(phi))).jacobian([x0, x1])


def dot(u_, v_):
    return sum(x * y for x, y in zip(u_, v_))


def expects(max_d: int = MAX_D, conventions=CONVENTIONS, partial: bool = False):
    """Every expectation with even head dim up to max_d in every convention (with rotary dim r < d
    as well when ``partial``)."""
    for d in range(2, max_d + 1, 2):
        for conv in conventions:
            yield Expect(head_dim=d, convention=conv)
            if partial and d >= 4:
                yield Expect(head_dim=d, rotary_dim=d - 2, convention=conv)


#: the fields that make an expectation multi-axis, at their 1-D values
ONE_D = {"mrope_section": None, "mrope_interleaved": False, "axes_dims_rope": None, "axes_parity": False,
         "axes_offset": None, "axes_scale": None, "axes_ladder": "theta", "axes_interleaved": False}


def scores_shift_invariant(what, axes: bool = False):
    """Raise unless <f(q, m + c), f(k, n + c)> = <f(q, m), f(k, n)> pair by pair, on every expectation of
    :func:`expects` (and of :func:`axes_expects` when ``axes``): the relative-position identity."""
    for e in list(expects()) + (list(axes_expects()) if axes else []):
        d = e.head_dim
        q, k, th = vec("q", d), vec("k", d), thetas(e.n_pairs)
        mm, nn, cc = (position_vec(v, e) for v in ("m", "n", "c")) if e.multi_axis else (m, n, c)
        fq, fk, fq2, fk2 = f(e, q, mm, th), f(e, k, nn, th), f(e, q, vadd(mm, cc), th), f(e, k, vadd(nn, cc), th)
        # the score is a sum over the output pairs: each pair's share is shown shift-invariant
        for oa, ob in e.out_pairs():
            _zero(fq[oa] * fk[oa] + fq[ob] * fk[ob] - fq2[oa] * fk2[oa] - fq2[ob] * fk2[ob],
                  f"{what}: {e.convention}, d = {d}, pair ({oa}, {ob})")
