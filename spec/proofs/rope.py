"""RoPE's own invariants: conformance to the paper's formula, norm, relative position, identity, composition,
linearity, locality and pass-through."""

from __future__ import annotations

import math

import sympy as sp

from ropespec.spec import definitions, scaling
from ropespec.spec.expectation import Expect
from ropespec.spec.schema import DIRECTIONS
from ropespec.spec.proofs.core import (BOUNDED, MAX_D, ProofError, ROT, SYMBOLIC, _zero, a, axes_expects, b_, base,
                                       expects, f, g, ladder_thetas, p, position_vec, proves, thetas, vadd, vec, ONE_D,
                                       scores_shift_invariant)




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
        if e.axes_interleaved:  # LTX-Video: freqs (3, K) transposed to (K, 3) and flattened, pair j = 3k + a
            A = len(e.axes_dims_rope)
            axis, k_ = j % A, j // A
        else:
            starts = [sum(e.axes_dims_rope[:a]) // 2 for a in range(len(e.axes_dims_rope))]
            axis = max(a for a, st in enumerate(starts) if st <= j)
            k_ = j - starts[axis]
        K = e.axes_dims_rope[axis] // 2
        if e.axes_ladder == "theta":
            return axis, (k_, e.axes_dims_rope[axis])
        # theta^linspace(0, +-1, K): exponent +-k/(K - 1) = -2k/R with R = -+2 (K - 1)
        return axis, (k_, (-2 if e.axes_ladder == "ascending" else 2) * max(K - 1, 1))
    axis = int(j >= k // 2)
    return axis, (2 * (j - axis * (k // 2)) + axis, r)


#: DINOv3's coordinates on a 14-patch grid (patch centres in [-1, 1] times 2 pi) and a 1-based axis beside a scaled one
COORDINATES = (Expect(head_dim=8, axes_dims_rope=[4, 4], axes_offset=[-6.5, -6.5], axes_scale=[4 * math.pi / 14] * 2,
                      max_position=14),
               Expect(head_dim=12, axes_dims_rope=[4, 8], convention="interleaved", axes_offset=[1, 0],
                      axes_scale=[1, 0.5]),
               # LTX-Video's: ascending ladders theta^(k/(K - 1)) dealt per frequency, coordinates 2 i / base - 1
               Expect(head_dim=18, axes_dims_rope=[6, 6, 6], convention="interleaved", axes_ladder="ascending",
                      axes_interleaved=True, axes_offset=[-10, -10, -10], axes_scale=[math.pi / 20] * 3,
                      max_position=20),
               Expect(head_dim=8, axes_dims_rope=[4, 4], axes_ladder="descending"))


@proves("rope.conformance", BOUNDED, ROT + ("convention: swapped", "direction: ignored", "ladder: b^(-i/r)", "axes: interleaving ignored",
                                            "ladder: per axis", "ladder: shared", "coordinates: offset ignored",
                                            "coordinates: scale ignored", "ladder: rule ignored", "rotary_start: ignored",
                                            "axes: per-frequency interleaving ignored"))
def conformance():
    b = base
    shifted = [e.replace(rotary_start=2, rotary_dim=e.head_dim - 2) for e in expects(conventions=("half", "interleaved"))
               if e.head_dim >= 6]  # the rotated dims after two that pass through (LTX-Video's padding)
    for e in [e.replace(direction=way) for e in list(expects(partial=True)) + shifted for way in DIRECTIONS]:
        d, r, s0 = e.head_dim, e.rotary_dim, e.rotary_start
        x = vec("x", d)
        th = [scaling.ladder(base, sp.Integer(i), sp.Integer(r)) for i in range(r // 2)]
        y = f(e, x, p, th)
        # the paper's formula (RoFormer eq. 34, transformers' rotate_half), written out per convention from the first
        # rotated dim s0 on; the reverse direction (nanochat's rotate_half cat(x2, -x1)) at -p theta_i
        want = list(x)
        for i in range(r // 2):
            t = b ** sp.Rational(-2 * i, r) * (-1 if e.direction == "reverse" else 1)
            src = (2 * i, 2 * i + 1) if e.convention in ("interleaved", "rope_interleave") else (i, i + r // 2)
            dst = (i, i + r // 2) if e.convention != "interleaved" else src
            src, dst = tuple(s0 + j for j in src), tuple(s0 + j for j in dst)
            xa, xb = x[src[0]], x[src[1]]
            want[dst[0]] = xa * sp.cos(p * t) - xb * sp.sin(p * t)
            want[dst[1]] = xa * sp.sin(p * t) + xb * sp.cos(p * t)
        _zero([yy - ww for yy, ww in zip(y, want)], f"{e.convention}, {e.direction}, d = {d}, r = {r} from {s0}")
    for e in list(axes_expects()) + list(COORDINATES):
        pv = position_vec("p", e)
        th = ladder_thetas(e)
        y = f(e, vec("x", e.head_dim), pv, th)
        want = f(e.replace(**ONE_D), vec("x", e.head_dim), 0, [0] * e.n_pairs)  # the dims, unturned
        # each axis's coordinate as the expectation states it: (p_a + axes_offset[a]) axes_scale[a], read exactly
        o = [sp.Rational(float(v)) for v in (e.axes_offset or [0] * e.n_axes)]
        s = [sp.Rational(float(v)) for v in (e.axes_scale or [1] * e.n_axes)]
        for j, ((ia, ib), (oa, ob)) in enumerate(zip(e.pairs(), e.out_pairs())):
            axis, (i, R_) = _documented_axis(e, j)
            phi = (pv[axis] + o[axis]) * s[axis] * b ** sp.Rational(-2 * i, R_)
            xa, xb = vec("x", e.head_dim)[ia], vec("x", e.head_dim)[ib]
            want[oa], want[ob] = xa * sp.cos(phi) - xb * sp.sin(phi), xa * sp.sin(phi) + xb * sp.cos(phi)
        _zero([yy - ww for yy, ww in zip(y, want)], f"{e.axes_kind()} axes, d = {e.head_dim}")
    return (f"f(x, p) of the definitions equals the paper's formula written out: pair i (interleaved (2i, 2i+1); half "
            f"(i, i + r/2); rope_interleave reads (2i, 2i+1), writes (i, i + r/2)) turns to (x_a cos - x_b sin, "
            f"x_a sin + x_b cos) at p b^(-2i/r) (at -p b^(-2i/r) in the reverse direction), dims >= r unchanged; symbolic x, p, b; every even d <= {MAX_D}, r = d and d - 2, and r = d - 2 from dim 2 (rotary_start); "
            f"multi-axis RoPE of every kind equals the models' rules written out (chunked sections, Qwen3-VL's j mod 3 "
            f"below 3 s_a, per-axis ladders b^(-2k/d_a), Pixtral's even/odd split) with symbolic position vectors, each "
            f"axis turning by its coordinate (p_a + offset) x scale (DINOv3's centres times 2 pi, a 1-based axis); "
            f"LTX-Video's ascending ladders theta^(k/(K - 1)) dealt per frequency (pair j = 3k + a), and descending ones")


@proves("rope.norm-per-pair", SYMBOLIC, ("R: doubled", "R: shear", "R: plus a bias"))
def norm_per_pair():
    xa, xb, phi = sp.symbols("x_a x_b phi", real=True)
    ya, yb = definitions.rotate(xa, xb, sp.cos(phi), sp.sin(phi))
    _zero(ya**2 + yb**2 - xa**2 - xb**2, "||R x||^2 = ||x||^2")
    return "the rotation of the definitions keeps the pair's norm: (x_a c - x_b s)^2 + (x_a s + x_b c)^2 = x_a^2 + x_b^2 for every angle"


@proves("rope.relative-position", BOUNDED, ("R: shear", "R: plus a bias"))
def relative_position():
    scores_shift_invariant("relative position", axes=True)
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


@proves("rope.partial-passthrough", BOUNDED, ("convention: over head_dim", "rotary_start: ignored"))
def partial_passthrough():
    shifted = [e.replace(rotary_start=2, rotary_dim=e.head_dim - 4) for e in expects(conventions=("half", "interleaved"))
               if e.head_dim >= 8]  # dims before rotary_start and past its rotated ones
    for e in list(expects(partial=True)) + shifted:
        if e.rotary_dim == e.head_dim:
            continue
        x = vec("x", e.head_dim)
        y = f(e, x, p, thetas(e.n_pairs), gain=g)
        rest = [j for j in range(e.head_dim) if not e.rotary_start <= j < e.rotary_start + e.rotary_dim]
        for j in rest:  # written out from the fields, not read from the geometry
            if y[j] != x[j]:
                raise ProofError(f"{e.convention}, d = {e.head_dim}, r = {e.rotary_dim} from {e.rotary_start}: dim {j} "
                                 f"is {y[j]}")
    for e in expects():  # a pair of frequency 0 (proportional RoPE's past partial_rotary_factor; attention factor 1)
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        y = f(e, x, p, th[:-1] + [sp.Integer(0)])
        (a, b), (oa, ob) = e.pairs()[-1], e.out_pairs()[-1]
        _zero([y[oa] - x[a], y[ob] - x[b]], f"{e.convention}, d = {e.head_dim}: the last pair at frequency 0")
    return (f"dims r .. d-1 of f(x, p) (and, with rotary_start s, dims below s and from s + r) are x's own, untouched "
            f"by angle or attention factor, and a pair of frequency 0 "
            f"(attention factor 1) is written where the convention writes it, unchanged; every even d <= {MAX_D}, "
            f"r = d - 2")
