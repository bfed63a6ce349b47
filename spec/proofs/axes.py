"""Multi-axis RoPE: each axis turns its own pairs; equal axes reduce to 1-D RoPE (or, per-axis ladders, do not)."""

from __future__ import annotations

import sympy as sp

from ropespec.spec.expectation import Expect
from ropespec.spec.proofs.core import (ProofError, SECTIONS, SYMBOLIC, _zero, axes_expects, base, c, f, ladder_thetas,
                                       p, position_vec, proves, thetas, vec, ONE_D)


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
        one_d = e.replace(**ONE_D)
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
    one_d = e.replace(**ONE_D)
    diff = [u1 - u2 for u1, u2 in zip(f(e, x, [p, p], ladder_thetas(e)), f(one_d, x, p, ladder_thetas(one_d)))]
    point = {p: 1, base: 10000, **{v: 1 for v in x}}
    gap = max(abs(sp.N(dd.subs(point), 30)) for dd in diff)
    if gap < sp.Float("1e-20"):
        raise ProofError("equal axes gave 1-D RoPE")
    return (f"a witness: axes_dims_rope [4, 4], x = 1, p = 1 on both axes, b = 10000 differs from 1-D RoPE at p = 1 by "
            f"{sp.N(gap, 6)} in some component (pair 2 restarts the ladder at b^0 where 1-D RoPE turns at b^(-1))")
