"""Proofs of the invariants, in sympy, on the project's own definitions.

Every proof builds its objects from :mod:`ropespec.spec.definitions` (the rotation, its sign, the conventions,
the pass-through dims, the attention factor, the sinusoidal pair, softmax) and :mod:`ropespec.spec.scaling` (the
frequency ladder and every scaling method), evaluated on sympy symbols, so a change to a definition
that breaks an invariant fails its proof. :data:`MUTATIONS` are such changes; each symbolic proof
names, in ``about``, the mutations of what it is about, and ``tests/test_proofs.py`` checks that it
fails under every one of them.

Each invariant has one proof with an honest kind:

* ``symbolic``: for all values of its symbols;
* ``symbolic, d <= 16`` (or ``n = 3``): for all values of its symbols, for every even head dim (or
  sequence length) up to the bound said;
* ``symbolic, listed sections``: for all values of its symbols, on the small multi-axis expectations of each kind
  that :func:`axes_expects` lists (unequal sections, every convention the models use);
* ``definition``: the invariant is what the definition says; no proof is needed and none is claimed;
* ``tested only``: a property of code (its memory, its state, its errors) that the mathematics does not
  speak to: the property tests it, nothing proves it.

A proof is a function of no arguments that returns a one-line account and raises :class:`ProofError`
when sympy does not establish the statement; :func:`verify` runs one and caches the outcome.
"""

from __future__ import annotations

import contextlib
import random
import time
import types
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import sympy as sp

from ropespec.spec import definitions, scaling
from ropespec.spec.invariants import REGISTRY
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
        return definitions.encode(expect, x, definitions.axis_angles(expect.pair_axes(), pos, th), sp.cos, sp.sin, gain)
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


# -- rope ---------------------------------------------------------------------------------------------
_ONE_D = {"mrope_section": None, "mrope_interleaved": False, "axes_dims_rope": None, "axes_parity": False}


def _documented_axis(e: Expect, j: int) -> tuple[int, tuple[int, int]]:
    """Pair j's axis and frequency (i, R), theta = b^(-2i/R), as the models' code deals them (Qwen2-VL's chunks,
    Qwen3-VL's interleaving, FLUX's per-axis ladders, Pixtral's parity), written from the models' rules, not from
    Expect.pair_axes / Expect.ladder."""
    r, k = e.rotary_dim, e.n_pairs
    if e.mrope_section is not None and e.mrope_interleaved:
        A, sec = len(e.mrope_section), e.mrope_section
        return (j % A if j % A and j < A * sec[j % A] else 0), (j, r)
    if e.mrope_section is not None:
        starts = [sum(e.mrope_section[:a]) for a in range(len(e.mrope_section))]
        return max(a for a, st in enumerate(starts) if st <= j), (j, r)
    if e.axes_dims_rope is not None:
        starts = [sum(e.axes_dims_rope[:a]) // 2 for a in range(len(e.axes_dims_rope))]
        axis = max(a for a, st in enumerate(starts) if st <= j)
        return axis, (j - starts[axis], e.axes_dims_rope[axis])
    axis = int(j >= k // 2)
    return axis, (2 * (j - axis * (k // 2)) + axis, r)


@proves("rope.conformance", BOUNDED, ROT + ("convention: swapped", "ladder: b^(-i/r)", "axes: interleaving ignored",
                                            "ladder: per axis", "ladder: shared"))
def conformance():
    b = base
    for e in expects(partial=True):
        d, r = e.head_dim, e.rotary_dim
        x = vec("x", d)
        th = [scaling.ladder(base, sp.Integer(i), sp.Integer(r)) for i in range(r // 2)]
        y = f(e, x, p, th)
        # the paper's formula (RoFormer eq. 34, transformers' rotate_half), written out per convention
        want = list(x)
        for i in range(r // 2):
            t = b ** sp.Rational(-2 * i, r)
            src = (2 * i, 2 * i + 1) if e.convention in ("interleaved", "rope_interleave") else (i, i + r // 2)
            dst = (i, i + r // 2) if e.convention != "interleaved" else src
            xa, xb = x[src[0]], x[src[1]]
            want[dst[0]] = xa * sp.cos(p * t) - xb * sp.sin(p * t)
            want[dst[1]] = xa * sp.sin(p * t) + xb * sp.cos(p * t)
        _zero([yy - ww for yy, ww in zip(y, want)], f"{e.convention}, d = {d}, r = {r}")
    for e in axes_expects():
        pv = position_vec("p", e)
        th = ladder_thetas(e)
        y = f(e, vec("x", e.head_dim), pv, th)
        want = f(e.replace(**_ONE_D), vec("x", e.head_dim), 0, [0] * e.n_pairs)  # the dims, unturned
        for j, ((ia, ib), (oa, ob)) in enumerate(zip(e.pairs(), e.out_pairs())):
            axis, (i, R_) = _documented_axis(e, j)
            phi = pv[axis] * b ** sp.Rational(-2 * i, R_)
            xa, xb = vec("x", e.head_dim)[ia], vec("x", e.head_dim)[ib]
            want[oa], want[ob] = xa * sp.cos(phi) - xb * sp.sin(phi), xa * sp.sin(phi) + xb * sp.cos(phi)
        _zero([yy - ww for yy, ww in zip(y, want)], f"{e.axes_kind()} axes, d = {e.head_dim}")
    return (f"f(x, p) of the definitions equals the paper's formula written out: pair i (interleaved (2i, 2i+1); half "
            f"(i, i + r/2); rope_interleave reads (2i, 2i+1), writes (i, i + r/2)) turns to (x_a cos - x_b sin, "
            f"x_a sin + x_b cos) at p b^(-2i/r), dims >= r unchanged; symbolic x, p, b; every even d <= {MAX_D}, r = d and d - 2; "
            f"multi-axis RoPE of every kind equals the models' rules written out (chunked sections, Qwen3-VL's j mod 3 "
            f"below 3 s_a, per-axis ladders b^(-2k/d_a), Pixtral's even/odd split) with symbolic position vectors")


@proves("rope.norm-per-pair", SYMBOLIC, ("R: doubled", "R: shear", "R: plus a bias"))
def norm_per_pair():
    xa, xb, phi = sp.symbols("x_a x_b phi", real=True)
    ya, yb = definitions.rotate(xa, xb, sp.cos(phi), sp.sin(phi))
    _zero(ya**2 + yb**2 - xa**2 - xb**2, "||R x||^2 = ||x||^2")
    return "the rotation of the definitions keeps the pair's norm: (x_a c - x_b s)^2 + (x_a s + x_b c)^2 = x_a^2 + x_b^2 for every angle"


def _relative(what, axes: bool = False):
    for e in list(expects()) + (list(axes_expects()) if axes else []):
        d = e.head_dim
        q, k, th = vec("q", d), vec("k", d), thetas(e.n_pairs)
        mm, nn, cc = (position_vec(v, e) for v in ("m", "n", "c")) if e.multi_axis else (m, n, c)
        fq, fk, fq2, fk2 = f(e, q, mm, th), f(e, k, nn, th), f(e, q, vadd(mm, cc), th), f(e, k, vadd(nn, cc), th)
        # the score is a sum over the output pairs: each pair's share is shown shift-invariant
        for oa, ob in e.out_pairs():
            _zero(fq[oa] * fk[oa] + fq[ob] * fk[ob] - fq2[oa] * fk2[oa] - fq2[ob] * fk2[ob],
                  f"{what}: {e.convention}, d = {d}, pair ({oa}, {ob})")


@proves("rope.relative-position", BOUNDED, ("R: shear", "R: plus a bias"))
def relative_position():
    _relative("relative position", axes=True)
    return (f"<f(q, m), f(k, n)> = <f(q, m + c), f(k, n + c)> with the definitions' f for symbolic q, k, m, n, c and "
            f"theta_i, every convention, every even d <= {MAX_D}; and for multi-axis RoPE of every kind (chunked, "
            f"interleaved, per-axis, parity) with symbolic position vectors m, n and shift c, which holds for a shift "
            f"along one axis (c = c_a e_a) as for a joint one")


@proves("rope.identity-at-zero", BOUNDED, ("R: reflection", "R: doubled"))
def identity_at_zero():
    for e in list(expects(partial=True)) + list(axes_expects()):
        x = vec("x", e.head_dim)
        zero = [0] * e.n_axes if e.multi_axis else 0
        _zero([yy - xx for yy, xx in zip(f(e, x, zero, thetas(e.n_pairs)), x)] if e.convention != "rope_interleave"
              else [f(e, x, zero, thetas(e.n_pairs))[e.output_dims()[j]] - x[j] for j in range(e.head_dim)],
              f"{e.convention}, d = {e.head_dim}")
    return (f"f(x, 0) = x (rope_interleave: x in its output layout) for symbolic x, theta_i; every even d <= {MAX_D}, and "
            f"multi-axis RoPE of every kind at the zero vector")


@proves("rope.composition", BOUNDED, ("R: reflection", "R: doubled", "R: shear", "R: plus a bias"))
def composition():
    for e in list(expects(conventions=("half", "interleaved"), partial=True)) + list(axes_expects()):
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        aa, bb = (position_vec(v, e) for v in ("a", "b")) if e.multi_axis else (a, b_)
        _zero([l_ - r__ for l_, r__ in zip(f(e, f(e, x, aa, th), bb, th), f(e, x, vadd(aa, bb), th))],
              f"{e.convention}, d = {e.head_dim}")
    return (f"f(f(x, a), b) = f(x, a + b) for symbolic x, a, b, theta_i (in-place conventions; rope_interleave is "
            f"the half layout of the interleaved map, lemma.convention-conjugacy); every even d <= {MAX_D}; multi-axis "
            f"RoPE of every kind with symbolic position vectors a, b")


@proves("rope.linearity", BOUNDED, ("R: plus a bias",))
def linearity():
    al, be = sp.symbols("alpha beta", real=True)
    for e in expects(partial=True):
        d = e.head_dim
        x, y, th = vec("x", d), vec("y", d), thetas(e.n_pairs)
        lhs = f(e, [al * xx + be * yy for xx, yy in zip(x, y)], p, th)
        rhs = [al * u1 + be * u2 for u1, u2 in zip(f(e, x, p, th), f(e, y, p, th))]
        _zero([l_ - r__ for l_, r__ in zip(lhs, rhs)], f"{e.convention}, d = {d}")
    return f"f(alpha x + beta y, p) = alpha f(x, p) + beta f(y, p) for symbolic x, y, alpha, beta, p, theta_i; every even d <= {MAX_D}"


def _documented_inputs(e: Expect, out: int) -> set[int]:
    """The input dims output dim ``out`` may read, as the conventions are documented (not from Expect)."""
    r = e.rotary_dim
    if out >= r:
        return {out}
    if e.convention == "interleaved":
        return {out - out % 2, out - out % 2 + 1}
    i = out % (r // 2)
    return {2 * i, 2 * i + 1} if e.convention == "rope_interleave" else {i, i + r // 2}


@proves("rope.locality", BOUNDED, ("convention: swapped",))
def locality():
    for e in expects(partial=True):
        d = e.head_dim
        x = vec("x", d)
        J = sp.Matrix(f(e, x, p, thetas(e.n_pairs))).jacobian(x)
        for o in range(d):
            allowed = _documented_inputs(e, o)
            for j in range(d):
                if (j in allowed) != (J[o, j] != 0):
                    raise ProofError(f"{e.convention}, d = {d}, r = {e.rotary_dim}: output {o} "
                                     f"{'reads' if J[o, j] != 0 else 'does not read'} input {j}")
    return (f"the Jacobian of the definitions' f is non-zero exactly on the documented pairs (interleaved (2i, 2i+1), "
            f"half (i, i + r/2), rope_interleave (2i, 2i+1) -> (i, i + r/2), dims >= r the identity); every even d <= {MAX_D}")


@proves("rope.partial-passthrough", BOUNDED, ("convention: over head_dim",))
def partial_passthrough():
    for e in expects(partial=True):
        if e.rotary_dim == e.head_dim:
            continue
        x = vec("x", e.head_dim)
        y = f(e, x, p, thetas(e.n_pairs), gain=g)
        for j in range(e.rotary_dim, e.head_dim):
            if y[j] != x[j]:
                raise ProofError(f"{e.convention}, d = {e.head_dim}, r = {e.rotary_dim}: dim {j} is {y[j]}")
    for e in expects():  # a pair of frequency 0 (proportional RoPE's past partial_rotary_factor; attention factor 1)
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        y = f(e, x, p, th[:-1] + [sp.Integer(0)])
        (a, b), (oa, ob) = e.pairs()[-1], e.out_pairs()[-1]
        _zero([y[oa] - x[a], y[ob] - x[b]], f"{e.convention}, d = {e.head_dim}: the last pair at frequency 0")
    return (f"dims r .. d-1 of f(x, p) are x's own, untouched by angle or attention factor, and a pair of frequency 0 "
            f"(attention factor 1) is written where the convention writes it, unchanged; every even d <= {MAX_D}, "
            f"r = d - 2")


# -- axes ---------------------------------------------------------------------------------------------
@proves("axes.separation", SECTIONS, ("axes: neighbour's position added",))
def axes_separation():
    for e in axes_expects():
        x, th, pv = vec("x", e.head_dim), thetas(e.n_pairs), position_vec("p", e)
        y = f(e, x, pv, th)
        for axis in range(e.n_axes):
            moved = f(e, x, [v + c if i == axis else v for i, v in enumerate(pv)], th)
            others = [j for j, own in enumerate(e.pair_axes()) if own != axis]
            _zero([moved[o] - y[o] for j in others for o in e.out_pairs()[j]], f"{e.axes_kind()}, move along axis {axis}")
    return ("f(x, p + c e_a) equals f(x, p) on every pair of another axis, for symbolic x, p, c, theta_j, every axis of "
            "each kind (chunked, interleaved, per-axis, parity)")


@proves("axes.text-reduction", SECTIONS, ("axes: neighbour's position added", "ladder: per axis"))
def axes_text_reduction():
    for e in axes_expects(("chunked", "interleaved")):
        x = vec("x", e.head_dim)
        one_d = e.replace(**_ONE_D)
        _zero([u1 - u2 for u1, u2 in zip(f(e, x, [p] * e.n_axes, ladder_thetas(e)), f(one_d, x, p, ladder_thetas(one_d)))],
              f"{e.axes_kind()}, d = {e.head_dim}")
    return ("f(x, (m, ..., m)) = RoPE(x, m) with each side's own frequencies (the sections' shared ladder, the 1-D "
            "ladder b^(-2j/r)), for symbolic x, m, b; chunked and interleaved sections")


@proves("axes.one-axis", SECTIONS, ("axes: neighbour's position added", "ladder: shared"))
def axes_one_axis():
    for e in axes_expects(("per-axis",)):
        x = vec("x", e.head_dim)
        for axis, d_a in enumerate(e.axes_dims_rope):
            at = [p if i == axis else 0 for i in range(e.n_axes)]
            y = f(e, x, at, ladder_thetas(e))
            mine = [j for j, own in enumerate(e.pair_axes()) if own == axis]
            # 1-D RoPE of d_a dims, interleaved, on the axis's pairs gathered in order
            flat = [x[ab] for j in mine for ab in e.pairs()[j]]
            one = f(Expect(head_dim=d_a, convention="interleaved"), flat, p, [base ** sp.Rational(-2 * k, d_a)
                                                                               for k in range(d_a // 2)])
            for k, j in enumerate(mine):
                oa, ob = e.out_pairs()[j]
                _zero([y[oa] - one[2 * k], y[ob] - one[2 * k + 1]], f"axis {axis}, pair {j}")
            for j in (j for j, own in enumerate(e.pair_axes()) if own != axis):
                ia, ib = e.pairs()[j]
                oa, ob = e.out_pairs()[j]
                _zero([y[oa] - x[ia], y[ob] - x[ib]], f"axis {axis}: pair {j} of another axis")
    return ("f(x, m e_a) is, on axis a's pairs, the 1-D RoPE of d_a dims with the ladder b^(-2k/d_a) and the identity on "
            "every other pair, for symbolic x, m, b and each axis of the per-axis expectations")


@proves("axes.equal-axes-differ", SYMBOLIC, ("ladder: shared",))
def axes_equal_axes_differ():
    e = Expect(head_dim=8, axes_dims_rope=[4, 4])
    x = vec("x", 8)
    one_d = e.replace(**_ONE_D)
    diff = [u1 - u2 for u1, u2 in zip(f(e, x, [p, p], ladder_thetas(e)), f(one_d, x, p, ladder_thetas(one_d)))]
    point = {p: 1, base: 10000, **{v: 1 for v in x}}
    gap = max(abs(sp.N(dd.subs(point), 30)) for dd in diff)
    if gap < sp.Float("1e-20"):
        raise ProofError("equal axes gave 1-D RoPE")
    return (f"a witness: axes_dims_rope [4, 4], x = 1, p = 1 on both axes, b = 10000 differs from 1-D RoPE at p = 1 by "
            f"{sp.N(gap, 6)} in some component (pair 2 restarts the ladder at b^0 where 1-D RoPE turns at b^(-1))")


# -- scaling ------------------------------------------------------------------------------------------
def _mix_sides(theta, mm, sf):
    """theta' - theta/s and theta - theta' for theta' = scaling.mix(theta, m, s)."""
    tp = scaling.mix(theta, mm, sf)
    return tp - theta / sf, theta - tp


@proves("scaling.bounded", SYMBOLIC, ("linear: theta * s", "mix: divides by s^2", "ntk: exponent r/(r-4)"))
def scaling_bounded():
    th = sp.Symbol("theta", positive=True)
    sf = 1 + u
    # the mixing methods (yarn: m = the clamped ramp; llama3: m = 1 - gamma, 0 or 1 outside the band)
    w0, w1 = sp.symbols("w0 w1", nonnegative=True)
    mm = w0 / (w0 + w1 + sp.Symbol("eps", positive=True))  # any m in [0, 1)
    for mval, what in ((mm, "m in [0, 1)"), (sp.Integer(1), "m = 1"), (sp.Integer(0), "m = 0")):
        lo_side, hi_side = _mix_sides(th, mval, sf)
        _sign(lo_side, "nonnegative", f"mix, {what}: theta' >= theta/s")
        _sign(hi_side, "nonnegative", f"mix, {what}: theta' <= theta")
    _zero(scaling.mix(th, mm, 1) - th, "mix at s = 1")
    # linear
    _zero(scaling.linear(th, sf) - th / sf, "linear is theta/s")
    _zero(scaling.linear(th, 1) - th, "linear at s = 1")
    # ntk and dynamic: ln theta'_i = ln theta_i - t ln s' with t = 2i/(r-2) in [0, 1]
    t0, t1 = sp.symbols("t0 t1", nonnegative=True)
    tt = t0 / (t0 + t1 + sp.Symbol("eps", positive=True))  # any t in [0, 1)
    i = tt * (r_ - 2) / 2  # pair index i = t (r-2)/2 in [0, r/2 - 1]
    lam = sp.Symbol("lambda", nonnegative=True)  # ln s' >= 0
    for name, new_base, s_eff, grows in (
        ("ntk", scaling.ntk_base(base, sf, r_), sf, False),
        ("dynamic", scaling.dynamic_base(base, s, L * (1 + u), L, r_), scaling.dynamic_factor(s, L * (1 + u), L), True),
    ):
        log_t = sp.expand_log(sp.log(scaling.ladder(new_base, i, r_)), force=True)
        log_theta = sp.expand_log(sp.log(scaling.ladder(base, i, r_)), force=True)
        drop = sp.simplify(sp.expand_log(log_theta - log_t, force=True) if grows else
                           (log_theta - log_t).subs(sp.log(s_eff), lam))
        if grows:  # s' = s l/L - (s - 1) = 1 + s u >= 1 at l = L(1 + u)
            _zero(s_eff - (1 + s * u), "dynamic's effective factor")
            drop = sp.simplify(drop.subs(sp.log(1 + s * u), lam))
        _zero(drop - tt * lam, f"{name}: ln theta_i - ln theta'_i = t ln s'")
        _sign(tt * lam, "nonnegative", f"{name}: theta' <= theta")
        _sign((1 - tt) * lam, "nonnegative", f"{name}: theta' >= theta/s' for t <= 1")
    _zero(scaling.ntk_base(base, 1, r_) - base, "ntk at s = 1")
    return ("theta' between theta/s and theta for s >= 1: mix (yarn, llama3) theta' - theta/s = (1 - m) theta (s-1)/s >= 0 and "
            "theta - theta' = m theta (s-1)/s >= 0 for m in [0, 1]; linear theta/s; ntk and dynamic (effective s' = s l/L - (s-1) "
            "= 1 + s(l-L)/L >= 1 for l >= L) ln theta_i - ln theta'_i = t ln s' with t = 2i/(r-2) in [0, 1]; s = 1 gives theta "
            "(mix, linear, ntk). Symbolic theta, s, m, b, r, L, l")


@proves("scaling.linear-positions", BOUNDED, ("linear: theta * s",))
def linear_positions():
    for e in expects(partial=True):
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        scaled = [scaling.linear(t, s) for t in th]
        _zero([l_ - r__ for l_, r__ in zip(f(e, x, s * p, scaled), f(e, x, p, th))], f"{e.convention}, d = {e.head_dim}")
    return f"f with theta_i/s at position s p equals f with theta_i at p, symbolic x, p, s, theta_i; every even d <= {MAX_D}"


@proves("scaling.ntk-endpoints", SYMBOLIC, ("ntk: b s", "ntk: exponent r/(r-4)", "ladder: b^(-i/r)"))
def ntk_endpoints():
    new = scaling.ntk_base(base, s, r_)
    _zero(scaling.ladder(new, 0, r_) - 1, "theta'_0 = 1")
    last = r_ / 2 - 1
    ratio = sp.powsimp(sp.powdenest(sp.expand_power_base(
        scaling.ladder(new, last, r_) / scaling.ladder(base, last, r_), force=True), force=True), force=True)
    _zero(sp.simplify(ratio) - 1 / s, "theta'_(r/2-1) = theta_(r/2-1) / s")
    return "with scaling.ntk_base b' = b s^(r/(r-2)): theta'_0 = 1 and theta'_(r/2-1) = theta_(r/2-1) / s, symbolic b, s, r"


@proves("scaling.band-edges", SYMBOLIC, ("mix: inverted", "yarn: betas swapped", "yarn: ramp (i - low)/high",
                                                       "llama3: lo and hi swapped"))
def band_edges():
    th = sp.Symbol("theta", positive=True)
    sf = 1 + u
    # the share kept moves from theta (m = 0) to theta/s (m = 1), monotonically in m
    _zero(scaling.mix(th, 0, sf) - th, "m = 0 keeps theta")
    _zero(scaling.mix(th, 1, sf) - th / sf, "m = 1 divides by s")
    mm = sp.Symbol("m", real=True)
    _sign(-sp.diff(scaling.mix(th, mm, sf), mm), "nonnegative", "theta' decreases as m grows")
    # yarn: low < high (beta_fast > beta_slow, b > 1), the ramp is 0 at low, 1 at high and grows with i
    bs, gap, lb = sp.Symbol("beta_slow", positive=True), sp.Symbol("k", positive=True), sp.Symbol("ln_b", positive=True)
    low, high = scaling.yarn_bounds(r_, L, base, bs * sp.exp(gap), bs, SYM)
    width = sp.expand_log(high - low, force=True).subs(sp.log(base), lb)
    _sign(width, "positive", "yarn: high - low > 0 for beta_fast > beta_slow")
    lo_, w = sp.Symbol("low", real=True), sp.Symbol("w", positive=True)
    i = sp.Symbol("i", real=True)
    _zero(scaling.yarn_ramp(lo_, lo_, lo_ + w), "yarn ramp at low")
    _zero(scaling.yarn_ramp(lo_ + w, lo_, lo_ + w) - 1, "yarn ramp at high")
    _sign(sp.diff(scaling.yarn_ramp(i, lo_, lo_ + w), i), "positive", "yarn ramp grows with i")
    # llama3: the share divided, 1 - gamma, is 0 at wavelength L/hi and 1 at L/lo, and grows with the wavelength
    lo, dh, lam = sp.Symbol("lo", positive=True), sp.Symbol("dh", positive=True), sp.Symbol("lambda", positive=True)
    hi = lo + dh
    share = 1 - scaling.llama3_gamma(L, lam, lo, hi)
    _zero(share.subs(lam, L / hi), "llama3: nothing divided at wavelength L/hi")
    _zero(share.subs(lam, L / lo) - 1, "llama3: all divided at wavelength L/lo")
    _sign(sp.diff(share, lam), "positive", "llama3: the share divided grows with the wavelength")
    _zero(scaling.wavelength(th, SYM) - 2 * sp.pi / th, "wavelength")
    return ("theta' = mix(theta, m, s) is theta at m = 0, theta/s at m = 1 and decreasing in m (s >= 1); yarn: high - low = "
            "r ln(beta_fast/beta_slow)/(2 ln b) > 0 and m = the ramp, 0 at low, 1 at high, increasing in i; llama3: m = 1 - gamma, "
            "0 at wavelength L/hi, 1 at L/lo, increasing in the wavelength (so in i). Symbolic theta, s, b, r, L, betas, lo, hi")


@proves("scaling.dynamic-length", SYMBOLIC, ("dynamic: factor s l/L",))
def dynamic_length():
    l_ = sp.Symbol("l", positive=True)
    _zero(scaling.dynamic_factor(s, L, L) - 1, "s' = 1 at l = L")
    _zero(scaling.dynamic_base(base, s, L, L, r_) - base, "b' = b at l = L")
    _sign(sp.diff(scaling.dynamic_factor(s, l_, L), l_), "positive", "s' grows with l")
    # theta_i = b'^(-2i/r): ln theta_i = -(2i/r) ln b', decreasing in b' for i > 0; b' = b s'^(r/(r-2)) grows with s'
    i, lb = sp.Symbol("i", positive=True), sp.Symbol("ln_bp", positive=True)
    bp = sp.Symbol("bp", positive=True)
    _sign(-sp.diff(sp.expand_log(sp.log(scaling.ladder(bp, i, r_ + 2)), force=True), bp), "positive",
          "theta_i decreases as the base grows")
    sp_ = sp.Symbol("sp", positive=True)
    _sign(sp.diff(scaling.ntk_base(base, sp_, r_ + 2), sp_), "positive", "the base grows with s' (r > 2)")
    return ("dynamic: s' = s l/L - (s - 1) is 1 at l = L (b' = b: the default table; below L the type uses it by definition) "
            "and d s'/dl = s/L > 0; b' = b s'^(r/(r-2)) grows with s' and theta_i = b'^(-2i/r) falls as b' grows, so every "
            "theta_i only decreases with the length. Symbolic s, l, L, b, r > 2, i > 0")


@proves("scaling.attention-factor", BOUNDED, ("R: doubled", "R: shear", "R: plus a bias",
                                                                 "factor: applied twice", "yarn mscale: 0.1 ln s + 1.1"))
def attention_factor():
    for e in expects(partial=True):
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        y = f(e, x, p, th, gain=g)
        for (aa, bb), (oa, ob) in zip(e.pairs(), e.out_pairs()):
            _zero(y[oa] ** 2 + y[ob] ** 2 - g**2 * (x[aa] ** 2 + x[bb] ** 2), f"{e.convention}, d = {e.head_dim}")
    # the factors are 1 without scaling (s = 1), so an unscaled table is the default one
    _zero(scaling.yarn_mscale(1, sp.Symbol("mscale", positive=True), SYM) - 1, "yarn's g(1) = 1")
    _zero(scaling.longrope_mscale(1, L, SYM) - 1, "longrope's factor at s = 1")
    q, k = vec("q", 2), vec("k", 2)
    e2 = Expect(head_dim=2)
    _zero(dot(f(e2, q, m, [th := sp.Symbol("theta", positive=True)], g), f(e2, k, n, [th], g))
          - g**2 * dot(q, f(e2, k, n - m, [th])), "logits")
    return (f"||f(x, p)_pair|| = g ||x_pair|| for every pair with the factor g of the definitions, and <f_g(q, m), f_g(k, n)> = "
            f"g^2 <q, f(k, n - m)>: logits carry g^2; yarn's g and longrope's factor are 1 at s = 1; symbolic x, p, g, "
            f"theta_i, mscale, L; every even d <= {MAX_D}")


@proves("autograd.inverse-rotation", BOUNDED, ("R: reflection", "R: shear", "R: plus a bias"))
def autograd_inverse_rotation():
    for e in expects(partial=True):
        d = e.head_dim
        x, gv, th = vec("x", d), vec("g", d), thetas(e.n_pairs)
        J = sp.Matrix(f(e, x, p, th)).jacobian(x)
        back = f(e, gv, -p, th)  # the inverse rotation
        if e.convention == "rope_interleave":  # y = P f_interleaved(x): J^T g = f_interleaved(P^T g, -p)
            back = f(e.replace(convention="interleaved"), [gv[e.output_dims()[j]] for j in range(d)], -p, th)
        _zero(list(J.T * sp.Matrix(gv) - sp.Matrix(back)), f"{e.convention}, d = {d}, r = {e.rotary_dim}")
    return ("the gradient of <f(x, p), g> is J^T g = f(g, -p), the inverse rotation, with pass-through dims getting g "
            f"unchanged (rope_interleave: read back in the input layout); symbolic x, g, p, theta_i; every even d <= {MAX_D}")


# -- sinusoidal ---------------------------------------------------------------------------------------
def pe(pos, th) -> list:
    out = []
    for t in th:
        out += list(definitions.pe_pair(pos * t, sp.cos, sp.sin))
    return out


@proves("sinusoidal.norm", BOUNDED, ("PE: sin twice",))
def sinusoidal_norm():
    for d in range(2, MAX_D + 1, 2):
        _zero(dot(pe(p, thetas(d // 2)), pe(p, thetas(d // 2))) - sp.Rational(d, 2), f"d = {d}")
    return f"||PE(p)||^2 = d/2 with the definitions' pair (sin p theta_i, cos p theta_i); symbolic p, theta_i; every even d <= {MAX_D}"


@proves("sinusoidal.relative-dot", BOUNDED, ("PE: sin twice",))
def sinusoidal_relative_dot():
    for d in range(2, MAX_D + 1, 2):
        th = thetas(d // 2)
        _zero(dot(pe(m, th), pe(n, th)) - sum(sp.cos((m - n) * t) for t in th), f"d = {d}")
    return f"PE(m) . PE(n) = sum_i cos((m - n) theta_i): a function of m - n; symbolic m, n, theta_i; every even d <= {MAX_D}"


@proves("sinusoidal.shift-matrix", BOUNDED, ("PE: sin twice",))
def sinusoidal_shift_matrix():
    k = sp.Symbol("k", real=True)
    for d in range(2, MAX_D + 1, 2):
        th = thetas(d // 2)
        Mk = sp.diag(*[sp.Matrix([[sp.cos(k * t), sp.sin(k * t)], [-sp.sin(k * t), sp.cos(k * t)]]) for t in th])
        _zero(list(sp.Matrix(pe(p + k, th)) - Mk * sp.Matrix(pe(p, th))), f"d = {d}")
    return (f"PE(p + k) = M_k PE(p) with M_k = diag([[cos k theta_i, sin k theta_i], [-sin k theta_i, cos k theta_i]]), free of p; "
            f"symbolic p, k, theta_i; every even d <= {MAX_D}")


@proves("sinusoidal.distinct", SYMBOLIC, ("PE: sin twice",))
def sinusoidal_distinct():
    gap, th = sp.Symbol("k", real=True), sp.Symbol("theta", positive=True)
    diff = [x - y for x, y in zip(pe(p + gap, [th]), pe(p, [th]))]
    _zero(dot(diff, diff) - 4 * sp.sin(gap * th / 2) ** 2, "pair distance")
    return ("||PE_i(p + k) - PE_i(p)||^2 = 4 sin^2(k theta_i / 2): zero only when k theta_i is a multiple of 2 pi, so positions "
            "closer than the slowest pair's period 2 pi / theta_min never coincide; symbolic p, k, theta")


@proves("additive.cross-term-leakage", SYMBOLIC, ("R: shear", "R: plus a bias"))
def additive_leakage():
    th = [sp.Symbol("theta", positive=True)]
    xq, xk = vec("u", 2), vec("v", 2)
    W1, W2 = sp.Matrix(2, 2, sp.symbols("w0:4", real=True)), sp.Matrix(2, 2, sp.symbols("z0:4", real=True))

    def additive(mm, nn):
        return dot(W1 * (sp.Matrix(xq) + sp.Matrix(pe(mm, th))), W2 * (sp.Matrix(xk) + sp.Matrix(pe(nn, th))))

    # a witness: the additive score at the same gap differs between two starts
    witness = {sp.Symbol("theta", positive=True): 1, **{v: 1 for v in xq + xk}, **dict(zip(W1, (1, 0, 0, 1))),
               **dict(zip(W2, (1, 0, 0, 1)))}
    delta = (additive(0, 2) - additive(1, 3)).subs(witness)
    if sp.simplify(delta) == 0 or not sp.N(delta, 30).is_nonzero:
        raise ProofError("the additive score did not change with the start")
    e2 = Expect(head_dim=2)

    def rope(mm, nn):
        return dot(f(e2, list(W1 * sp.Matrix(xq)), mm, th), f(e2, list(W2 * sp.Matrix(xk)), nn, th))

    _zero(rope(m, n) - rope(m + c, n + c), "RoPE's score")
    return (f"additive: with W_Q = W_K = I, x = (1, 1), theta = 1 the score at gap 2 is {sp.N(additive(0, 2).subs(witness), 6)} at "
            f"start 0 and {sp.N(additive(1, 3).subs(witness), 6)} at start 1 (a witness that it leaks); RoPE's <f(W q, m), f(W k, n)> "
            f"equals its value at (m + c, n + c) for symbolic W, q, k, m, n, c, theta")


# -- attention ----------------------------------------------------------------------------------------
@proves("attention.shift-invariance", BOUNDED, ("R: shear", "R: plus a bias"))
def attention_shift_invariance():
    _relative("scores")
    return (f"every score <f(q_i, p_i), f(k_j, p_j)> is unchanged when all positions shift by c (as rope.relative-position, "
            f"every even d <= {MAX_D}); the output softmax(S) V is a function of the scores and V, so it is unchanged")


@proves("attention.permutation-equivariance", BOUNDED_N, ("softmax: causal mask always",))
def attention_permutation():
    N = 3
    S = [[sp.Symbol(f"s_{i}{j}", real=True) for j in range(N)] for i in range(N)]
    V = sp.Matrix(N, 2, lambda i, j: sp.Symbol(f"v_{i}{j}", real=True))
    P = sp.Matrix([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    PS = P * sp.Matrix(S) * P.T
    lhs = sp.Matrix(definitions.attention_weights(PS.tolist(), sp.exp)) * (P * V)
    rhs = P * (sp.Matrix(definitions.attention_weights(S, sp.exp)) * V)
    _zero(list(lhs - rhs), "equivariance")
    return ("softmax(P S P^T) P V = P softmax(S) V with the definitions' softmax, for the cyclic permutation P of n = 3 rows "
            "(symbolic scores, which move with their rows and positions, and values)")


# -- the registry -------------------------------------------------------------------------------------

declare("contract.input-unmodified", TESTED, "a property of code (does it write into the caller's array?); the definition "
                                         "returns a new vector and cannot say what code writes")
declare("contract.deterministic", TESTED, "a property of code (state, uninitialised memory, nondeterministic reductions); "
                                      "the definition is a function")
declare("contract.shape-finite", TESTED, "a property of code (what it returns, whether it returns); the definition's values "
                                     "are finite for finite x since |y_j| <= |x_a| + |x_b|")
declare("scaling.longrope-switch", DEFINITION, "LongRoPE's rule is the definition: short factors for seq_len <= L, long beyond "
                                           "(ropespec.spec.tables.table_variant); the property checks the implementation at L and L + 1")
declare("decode.consistency", TESTED, "a property of a decoder's cache: the definition has no cache. dynamic NTK's tables differ "
                                  "between lengths (scaling.dynamic-length), which is why cached keys can go stale")
declare("kernel.rotation", DEFINITION, "the rotation by a given cos and sin is the definition (ropespec.spec.definitions.rotate); the "
                                   "property checks the kernel against it, formed exactly")
declare("rope.layout", DEFINITION, "each row of each head is the apply function of its own position (rope.conformance's "
                               "definition); the property checks every row of a batched call against it")
declare("kernel.qk", DEFINITION, "as kernel.rotation: the rotation by a given table is the definition; the property "
                             "checks each head of q and k against it")
declare("table.angles", DEFINITION, "the table is the definition's cos and sin of p theta'_i times g (ropespec.spec.definitions.rotate "
                                "of (1, 0)); the property checks the builder against them")
declare("sinusoidal.conformance", DEFINITION, "PE(p) is defined by these values (ropespec.spec.definitions.pe_pair); the property checks "
                                          "the implementation against them")
declare("sinusoidal.length-independent", DEFINITION, "PE(p) = (sin p theta_i, cos p theta_i) has no term in the sequence "
                                                 "length; the property checks code that might normalise by it")
declare("position-ids.text", DEFINITION, "ropespec.spec.positions' rule gives a text token one position on every axis, one "
        "more than the token before; that M-RoPE at equal axes is 1-D RoPE is axes.text-reduction's proof")
declare("position-ids.grid", DEFINITION, "ropespec.spec.positions.block: a vision block's h and w are its start plus the merged "
        "grid's row and column, row-major")
declare("position-ids.time", DEFINITION, "ropespec.spec.positions.time_index: the model's clock (video_time), truncated as its "
        "code truncates; exact rationals, with float32's rounding under a whole number allowed (time_options)")
declare("position-ids.resume", DEFINITION, "ropespec.spec.positions.position_ids: every segment starts at one past the largest "
        "position so far")
declare("position-ids.batch", TESTED, "a property of the builder's code: how it reads its batch and its attention mask")
declare("position-ids.decode", TESTED, "a property of the builder's code: the decode position it carries (rope_deltas)")
declare("learned.in-range", TESTED, "a property of the table's code: every row below max_len is answered and finite")
declare("learned.out-of-range-raises", TESTED, "a property of the table's code: what it does past its last row")
declare("learned.parameter-count", DEFINITION, "a table of max_len rows of d parameters holds max_len x d of them")
declare("attention.values-unrotated", DEFINITION, "attention rotates q and k only (RoFormer eq. 16); the property checks that "
                                              "code does not rotate V")
declare("attention.causal", DEFINITION, "the causal mask is out_i = sum over j <= i; the property checks code's mask")
declare("decode.attention-consistency", DEFINITION, "a step over the cached rows 0..t computes row t of the causal pass by "
                                                "definition; the property checks a decoder's cache and offsets")
declare("attention.grouped-query", DEFINITION, "query head h reads kv head h // (n_heads / n_kv_heads): the layout of "
                                           "transformers' repeat_kv, a convention")



# -- positional biases ----------------------------------------------------------------------------------
@proves("alibi.softmax-rows", SYMBOLIC, ("ALiBi: sign flipped",))
def alibi_softmax_rows():
    slope, cc = sp.Symbol("m", positive=True), sp.Symbol("c", real=True)
    i_ = sp.Symbol("i", real=True)
    keys = sp.symbols("j0:3", real=True)
    row = [definitions.alibi_bias(slope, i_, jj) for jj in keys]
    shifted = definitions.attention_weights([[v + cc for v in row]], sp.exp)[0]
    _zero([x - y for x, y in zip(shifted, definitions.attention_weights([row], sp.exp)[0])], "softmax(b + c)")
    # BLOOM's m j: the bias plus the row's constant m i, whatever the key
    _zero([slope * jj - definitions.alibi_bias(slope, i_, jj) - slope * i_ for jj in keys], "BLOOM's m j")
    sym = [definitions.alibi_bias(slope, i_, jj, symmetric=True) for jj in keys]
    _zero([x - y for x, y in zip(definitions.attention_weights([[v + cc for v in sym]], sp.exp)[0],
                                 definitions.attention_weights([sym], sp.exp)[0])], "softmax(b + c), symmetric")
    return ("softmax over a row of the definitions' bias -m (i - j) (and -m |i - j|) is unchanged by a constant c added "
            "to the row, and BLOOM's m j is the bias plus the row's constant m i; symbolic m > 0, i, three keys j, c")


@proves("alibi.relative-position", SYMBOLIC, ("ALiBi: product of positions",))
def alibi_relative_position():
    slope = sp.Symbol("m", positive=True)
    i_, j_, cc = sp.symbols("i j c", real=True)
    for symmetric in (False, True):
        shifted = definitions.alibi_bias(slope, i_ + cc, j_ + cc, symmetric)
        _zero(sp.simplify(shifted - definitions.alibi_bias(slope, i_, j_, symmetric)), f"symmetric={symmetric}")
    return "the definitions' bias at (i + c, j + c) equals it at (i, j), causal and symmetric; symbolic m > 0, i, j, c"


@proves("t5-bias.monotone", SYMBOLIC, ("T5: log ratio inverted",))
def t5_monotone():
    dist, md = sp.symbols("x D", positive=True)
    me = sp.Symbol("h", positive=True, integer=True)  # n = 2h buckets of one sign: max_exact = n // 2 = h
    logged = definitions.t5_log_bucket(dist, 2 * me, md, lambda a_, b2: sp.log(a_ / b2))
    # d/dx of the log-spaced bucket: h / (x ln(D / h)), positive for x > 0 and D = h (1 + w), w > 0
    w = sp.Symbol("w", positive=True)
    _sign(sp.diff(logged, dist).subs(md, me * (1 + w)), "positive", "d bucket / d distance")
    _zero(logged.subs(dist, me), "the log range starts at bucket 0 past max_exact")
    return ("the definitions' log-spaced bucket ln(x / h) / ln(D / h) (2h - h) of n = 2h buckets increases with the "
            "distance x (its derivative is positive for every D > h) and is 0 at x = h, so bucket h follows the last exact "
            "one, h - 1; floor and the min with n - 1 keep it non-decreasing; symbolic x, h, D")


@proves("t5-bias.saturates", SYMBOLIC, ("T5: log ratio inverted",))
def t5_saturates():
    md = sp.Symbol("D", positive=True)
    me = sp.Symbol("h", positive=True, integer=True)  # n = 2h: max_exact = h
    logged = definitions.t5_log_bucket(md, 2 * me, md, lambda a_, b2: sp.log(a_ / b2))
    _zero(sp.simplify(logged - me), "the bucket of max_distance")
    return ("at x = D (max_distance) the definitions' log-spaced bucket of n = 2h buckets is h, so its bucket h + h = n is "
            "past the last and the min makes it n - 1, as for every x > D (t5-bias.monotone); symbolic h, D")


def _xpos_score(mm, nn):
    """Pair 0's xPos score for symbolic q, k, theta, zeta, scale base: RoPE's rotated dot (the definitions' f) times
    the definitions' decay."""
    zeta, sb = sp.Symbol("zeta", positive=True), sp.Symbol("S", positive=True)
    th = [sp.Symbol("theta", positive=True)]
    e2 = Expect(head_dim=2)
    qv, kv = vec("q", 2), vec("k", 2)
    return definitions.xpos_pair_score(zeta, mm, nn, sb, dot(f(e2, qv, mm, th), f(e2, kv, nn, th))), dot(qv, kv)


@proves("xpos.relative-position", SYMBOLIC, ("xPos: keys scaled alike", "R: shear"))
def xpos_relative_position():
    _zero(sp.simplify(_xpos_score(m + c, n + c)[0] - _xpos_score(m, n)[0]), "score(m + c, n + c) - score(m, n)")
    return ("a pair's xPos score, zeta^((m - n) / S) times the definitions' R(m theta) q . R(n theta) k, is unchanged "
            "when m and n shift by c; symbolic q, k, m, n, c, theta, zeta > 0, S > 0")


@proves("xpos.inverse-scale", SYMBOLIC, ("xPos: keys scaled alike", "R: shear"))
def xpos_inverse_scale():
    score, plain = _xpos_score(m, m)
    _zero(sp.simplify(score - plain), "score(m, m) - q . k")
    return ("at equal positions a pair's xPos score is q . k: the scales zeta^(m / S) and zeta^(-m / S) cancel and so do "
            "the rotations; symbolic q, k, m, theta, zeta > 0, S > 0")


declare("xpos.conformance", DEFINITION, "the score is the definition (ropespec.spec.definitions.xpos_pair_score and xpos_zeta); "
        "the property checks code against it, with RoPE's rotation from the mpmath reference")
declare("alibi.slopes", DEFINITION, "the published rule is the definition (ropespec.spec.definitions.alibi_slopes, Press et al.'s "
        "get_slopes); the property checks code's slopes against it, and recovers them from a bias")
declare("alibi.per-head", DEFINITION, "each batch row and head is alibi.softmax-rows' definition over that row's "
        "positions and that head's slope; the property checks every (row, head) of a batched call against it")
declare("alibi.precision", TESTED, "a property of code: the precision the bias is formed in; the error bound is "
        "ropespec.spec.tolerance.bias_bound")
declare("t5-bias.conformance", DEFINITION, "ropespec.spec.definitions.t5_bucket is T5's published function; exact, with float32's "
        "rounding next to a whole log-spaced value allowed (ropespec.reference.biases.t5_buckets)")
declare("t5-bias.lookup", DEFINITION, "the lookup is the definition: the table's entry at T5's bucket of key - query "
        "(transformers' compute_bias); the property checks code against it with a table whose entries name themselves")
declare("t5-bias.exact-below", DEFINITION, "ropespec.spec.definitions.t5_bucket: a distance below max_exact is its own bucket")
declare("t5-bias.sign-split", DEFINITION, "ropespec.spec.definitions.t5_sign_split: the halves of the buckets by the sign of j - i")

# -- lemmas: facts the error model and the diagnoses rest on -------------------------------------------
def lemma_transpose_product():
    _zero(list(R(a).T * R(b_) - R(b_ - a)), "R(a)^T R(b) = R(b - a)")
    return "R(a)^T R(b) = R(b - a) for the definitions' R and symbolic a, b"


def lemma_cauchy_schwarz_rotation():
    xa, xb, cc, sn = sp.symbols("x_a x_b c s", real=True)
    lhs = (sp.Abs(xa) * sp.Abs(cc) + sp.Abs(xb) * sp.Abs(sn)) ** 2
    gap = sp.expand((xa**2 + xb**2) * (cc**2 + sn**2) - lhs)
    _zero(gap - sp.expand((sp.Abs(xa) * sp.Abs(sn) - sp.Abs(xb) * sp.Abs(cc)) ** 2), "Cauchy-Schwarz")
    return ("(|x_a c| + |x_b s|)^2 = (x_a^2 + x_b^2)(c^2 + s^2) - (|x_a s| - |x_b c|)^2 <= ||x||^2 (c^2 + s^2): the "
            "K_ROT = 4 bound's key step (algebra about numbers, not about a definition)")


def lemma_angle_error():
    x0, x1, dl = sp.symbols("x0 x1 delta", real=True)
    X = sp.Matrix([x0, x1])
    diff = R(a + dl) * X - R(a) * X
    _zero(diff.dot(diff) - 4 * sp.sin(dl / 2) ** 2 * X.dot(X), "angle error")
    return "||R(a + delta) x - R(a) x|| = 2 |sin(delta/2)| ||x|| <= |delta| ||x|| for the definitions' R"


def lemma_convention_conjugacy():
    for d in range(4, MAX_D + 1, 2):
        th = thetas(d // 2)
        x = vec("x", d)
        Ri = sp.Matrix(f(Expect(head_dim=d, convention="interleaved"), x, p, th)).jacobian(x)
        Rh = sp.Matrix(f(Expect(head_dim=d, convention="half"), x, p, th)).jacobian(x)
        P = sp.zeros(d)
        for i in range(d // 2):  # interleaved index 2i + c -> half index c d/2 + i
            P[i, 2 * i], P[i + d // 2, 2 * i + 1] = 1, 1
        _zero(list(Rh - P * Ri * P.T), f"d = {d}")
        _zero(list(P.T * P - sp.eye(d)), f"P orthogonal, d = {d}")
    return (f"R_half = P R_interleaved P^T for the definitions' two conventions, P the permutation 2i + c -> c d/2 + i, P^T P = I: "
            f"scores <P q, P k> are unchanged; every even d from 4 to {MAX_D}")


LEMMAS: dict[str, Proof] = {
    "lemma.transpose-product": Proof(SYMBOLIC, lemma_transpose_product, ("R: reflection", "R: shear")),
    "lemma.cauchy-schwarz-rotation": Proof(SYMBOLIC, lemma_cauchy_schwarz_rotation),
    "lemma.angle-error": Proof(SYMBOLIC, lemma_angle_error, ("R: doubled", "R: shear")),
    "lemma.convention-conjugacy": Proof(BOUNDED, lemma_convention_conjugacy, ("convention: swapped",)),
}
ALL: dict[str, Proof] = {**{i: PROOFS[i] for i in REGISTRY}, **LEMMAS}  # in the registry's order


# -- mutations: changes to the definitions that each break something ----------------------------------
def _pairs_swapped(self):
    r = self.rotary_dim
    if self.convention in ("interleaved", "rope_interleave"):
        return [(i, i + r // 2) for i in range(r // 2)]
    return [(2 * i, 2 * i + 1) for i in range(r // 2)]


def _pairs_head_dim(self):
    r = self.head_dim
    if self.convention in ("interleaved", "rope_interleave"):
        return [(2 * i, 2 * i + 1) for i in range(r // 2)]
    return [(i, i + r // 2) for i in range(r // 2)]


def _encode_gain_twice(expect, x, angles, cos, sin, gain=1, _orig=definitions.encode):
    return _orig(expect, x, angles, cos, sin, gain * gain) if gain != 1 else _orig(expect, x, angles, cos, sin, gain)


_ORIGINAL_PAIR_AXES, _ORIGINAL_LADDER = Expect.pair_axes, Expect.ladder


def _axes_chunked(self):
    """Expect.pair_axes with mrope_interleaved read as chunked sections."""
    if self.mrope_interleaved:
        return tuple(a for a, size in enumerate(self.mrope_section) for _ in range(size))
    return _ORIGINAL_PAIR_AXES(self)


def _ladder_per_axis(self):
    """Expect.ladder with every axis restarting its own ladder, normalised by its own dims (2 x its pairs)."""
    if not self.multi_axis:
        return _ORIGINAL_LADDER(self)
    axes = self.pair_axes()
    out, seen = [], {}
    for a_ in axes:
        out.append((seen.get(a_, 0), 2 * axes.count(a_)))
        seen[a_] = seen.get(a_, 0) + 1
    return tuple(out)


_yarn_bounds, _llama3_gamma, _mix = scaling.yarn_bounds, scaling.llama3_gamma, scaling.mix
#: name -> (object, attribute, replacement)
MUTATIONS: dict[str, tuple[object, str, object]] = {
    "R: reflection": (definitions, "rotate", lambda xa, xb, c_, s_: (xa * c_ + xb * s_, xa * s_ - xb * c_)),
    "R: doubled": (definitions, "rotate", lambda xa, xb, c_, s_: (2 * (xa * c_ - xb * s_), 2 * (xa * s_ + xb * c_))),
    "R: shear": (definitions, "rotate", lambda xa, xb, c_, s_: (xa + xb * s_, xb)),
    "R: transposed": (definitions, "rotate", lambda xa, xb, c_, s_: (xa * c_ + xb * s_, -xa * s_ + xb * c_)),
    "R: plus a bias": (definitions, "rotate", lambda xa, xb, c_, s_: (xa * c_ - xb * s_ + s_, xa * s_ + xb * c_)),
    "convention: swapped": (Expect, "pairs", _pairs_swapped),
    "convention: over head_dim": (Expect, "pairs", _pairs_head_dim),
    "factor: applied twice": (definitions, "encode", _encode_gain_twice),
    "ladder: b^(-i/r)": (scaling, "ladder", lambda b, i, r: b ** (-i / r)),
    "linear: theta * s": (scaling, "linear", lambda theta, s_: theta * s_),
    "ntk: b s": (scaling, "ntk_base", lambda b, s_, r: b * s_),
    "ntk: exponent r/(r-4)": (scaling, "ntk_base", lambda b, s_, r: b * s_ ** (r / (r - 4))),
    "mix: inverted": (scaling, "mix", lambda theta, m_, s_: m_ * theta + (1 - m_) * theta / s_),
    "mix: divides by s^2": (scaling, "mix", lambda theta, m_, s_: m_ * theta / s_**2 + (1 - m_) * theta),
    "yarn: betas swapped": (scaling, "yarn_bounds", lambda r, L_, b, bf, bs, M=scaling.MP: _yarn_bounds(r, L_, b, bs, bf, M)),
    "yarn: ramp (i - low)/high": (scaling, "yarn_ramp", lambda i, low, high: (i - low) / high),
    "yarn mscale: 0.1 ln s + 1.1": (scaling, "yarn_mscale", lambda s_, m_=1, M=scaling.MP: M.num("0.1") * m_ * M.log(s_) + M.num("1.1")),
    "llama3: lo and hi swapped": (scaling, "llama3_gamma", lambda L_, w, lo, hi: _llama3_gamma(L_, w, hi, lo)),
    "dynamic: factor s l/L": (scaling, "dynamic_factor", lambda s_, l, L_: s_ * l / L_),
    "PE: sin twice": (definitions, "pe_pair", lambda phi, cos, sin: (sin(phi), sin(phi))),
    "axes: neighbour's position added": (definitions, "axis_angles", lambda axes, pos, th: [
        (pos[a_] + pos[(a_ + 1) % len(pos)]) * t for a_, t in zip(axes, th)]),
    "axes: interleaving ignored": (Expect, "pair_axes", _axes_chunked),
    "ladder: per axis": (Expect, "ladder", _ladder_per_axis),
    "ladder: shared": (Expect, "ladder", lambda self: tuple((j, self.rotary_dim) for j in range(self.n_pairs))),
    "ALiBi: sign flipped": (definitions, "alibi_bias", lambda m_, i_, j_, symmetric=False: m_ * (i_ - j_)),
    "ALiBi: product of positions": (definitions, "alibi_bias", lambda m_, i_, j_, symmetric=False: -m_ * i_ * j_),
    "T5: log ratio inverted": (definitions, "t5_log_bucket", lambda x_, n_, md, log_ratio: log_ratio(n_ // 2, x_)
                               / log_ratio(md, n_ // 2) * (n_ - n_ // 2)),
    "xPos: keys scaled alike": (definitions, "xpos_pair_score", lambda zeta, m_, n_, sb, rd: zeta ** ((m_ + n_) / sb) * rd),
    "softmax: causal mask always": (definitions, "attention_weights",
                                    lambda scores, exp, causal=False, _o=definitions.attention_weights: _o(scores, exp, True)),
}


@contextlib.contextmanager
def mutated(name: str):
    """The definitions with one mutation applied (restored on exit)."""
    obj, attr, new = MUTATIONS[name]
    old = obj.__dict__[attr]
    setattr(obj, attr, new)
    try:
        yield
    finally:
        setattr(obj, attr, old)


def holds_under(proof_id: str, mutation: str) -> bool:
    """Whether the proof still verifies with the mutation applied (uncached)."""
    with mutated(mutation):
        try:
            ALL[proof_id].fn()
        except (ProofError, ZeroDivisionError, TypeError, ValueError):
            return False
    return True


@lru_cache(maxsize=None)
def verify(proof_id: str) -> tuple[bool, str]:
    """(holds, account): a proven kind runs its proof (cached per process); definition and tested only
    return their note and hold by construction (there is nothing to fail)."""
    pr = ALL[proof_id]
    if pr.fn is None:
        return True, pr.note
    try:
        return True, pr.fn()
    except ProofError as e:
        return False, str(e)


@dataclass
class Outcome:
    id: str
    kind: str
    ok: bool
    account: str
    seconds: float = 0.0
    #: (mutations it failed under, mutations of what it is about) once audited (:func:`audit`), else None
    killed: tuple[int, int] | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "ok": self.ok, "account": self.account, "seconds": round(self.seconds, 3),
                **({"mutants": list(self.killed)} if self.killed else {})}


def run_all(ids=None) -> list[Outcome]:
    """Run every proof (uncached), timing each."""
    out = []
    for pid in ids or ALL:
        t0 = time.perf_counter()
        pr = ALL[pid]
        if pr.fn is None:
            out.append(Outcome(pid, pr.kind, True, pr.note))
            continue
        try:
            ok, account = True, pr.fn()
        except ProofError as e:
            ok, account = False, str(e)
        out.append(Outcome(pid, pr.kind, ok, account, time.perf_counter() - t0))
    return out


def audit(outcome: Outcome) -> Outcome:
    """A proof that verified, run again under each mutation of what it is about: it must fail under every one. One
    that survives a mutation proves nothing about it, and fails the audit; ``killed`` counts them."""
    pr = ALL[outcome.id]
    if pr.fn is None or not pr.about or not outcome.ok:
        return outcome
    survived = [mu for mu in pr.about if holds_under(outcome.id, mu)]
    outcome.killed = (len(pr.about) - len(survived), len(pr.about))
    if survived:
        outcome.ok = False
        outcome.account = f"still verifies with {', '.join(survived)}: it does not prove what it claims"
    return outcome
