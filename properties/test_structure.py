"""Spec section "structure": linearity, locality of pairs, partial-rotary pass-through."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.contract import Failure
from ropespec.properties import probe
from ropespec.properties.diagnose import diagnose
from ropespec.properties.diagnose.structure import dim_runs
from ropespec.properties.assertions import assert_close, assert_equal, assert_zero
from ropespec.properties.numerics import per_dim
from ropespec.properties.cases import expect_strategy, pinned_expects, pinned_rows_of, rows_cases, rows_pinned
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import make_vectors, pinned_rows, position_rows, position_vectors, vectors
from ropespec.spec import tolerance
from ropespec.spec.dtypes import round_to

_U64 = 2.0**-53
_COEFFICIENTS = (1.0, -1.0, 2.0, 0.5, 3.0, -0.25)


def _linearity_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        k = draw(st.integers(1, 4), label="n")
        return {
            "expect": e,
            "positions": draw(position_rows(e, k, max_value=e.max_position), label="positions"),
            "alpha": draw(st.sampled_from(_COEFFICIENTS), label="alpha"),
            "beta": draw(st.sampled_from(_COEFFICIENTS), label="beta"),
            "x": draw(vectors(e, k), label="x"),
            "y": draw(vectors(e, k), label="y"),
        }

    return build()


def _linearity_pinned(impl):
    return [
        {"expect": e, "positions": pinned_rows_of(impl, e), "alpha": 0.5, "beta": 3.0, "x": make_vectors(e, 3),
         "y": make_vectors(e, 3, seed=1)}
        for e in pinned_expects(impl)
    ]


@rope_property("rope.linearity",
               rule=("same_angle_bound: K_ROT u_out per unit of the pair's norm; the angle error is common to "
                      "both sides and cancels"),
               cases=_linearity_cases, pinned=_linearity_pinned)
def test_linearity(bind, case):
    e, pos, al, be, x, y = (case[k] for k in ("expect", "positions", "alpha", "beta", "x", "y"))
    z = round_to(al * x + be * y, e.dtype)
    k = len(x)
    out = bind(e)(np.concatenate([x, y, z]), np.concatenate([pos, pos, pos]))
    fx, fy, fz = out[:k], out[k : 2 * k], out[2 * k :]
    # z = alpha x + beta y + rho, rho the rounding to the dtype. Pass-through dims carry rho as it is;
    # in a pair it is rotated, which moves a component by at most sqrt(2) times the pair norm of rho.
    # The three rows share their positions, hence their angles: only the rotation's rounding remains.
    rho = z - (al * x + be * y)
    combo = al * fx + be * fy
    combo[:, e.passthrough] += rho[:, e.passthrough]
    g = reference.attention_factor(e)
    same = lambda v: tolerance.same_angle_bound(e, g * tolerance.convention_free_norm(v))
    bound = (
        per_dim(e, np.broadcast_to(g * tolerance.convention_free_norm(rho), (k, e.n_pairs)))
        + same(z) + abs(al) * same(x) + abs(be) * same(y)
        + 2 * _U64 * (np.abs(al * fx) + np.abs(be * fy))
    )
    try:
        return assert_close("f(alpha x + beta y, p)", fz, combo, bound, call=f"alpha={al}, beta={be}, positions={pos.tolist()}",
                            dtype=e.dtype, against="alpha f(x, p) + beta f(y, p)")
    except Failure as err:
        found = diagnose(bind(e), e)  # a cause the probes can name (a bias, NaN, another convention) comes first
        if found is not None:
            raise err.named(found[0], found[1]) from None
        raise err.named("not-a-rotation", f"f is not linear in x (by {err.ratio:.3g} times the rounding linearity "
                                          f"allows), and a rotation is") from None


def _locality_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        return {
            "expect": e,
            "position": draw(position_vectors(e, max_value=e.max_position), label="position"),
            "log2 scale": draw(st.integers(-8, 8), label="log2 scale"),
        }

    return build()


def _locality_pinned(impl):
    return [{"expect": e, "position": 1 if not e.multi_axis else pinned_rows(e, [1, 2, 3])[0], "log2 scale": 0}
            for e in pinned_expects(impl)]


@rope_property("rope.locality",
               rule=("atol: a basis vector's leak into another pair must be below the output dtype's K_ROT "
                      "smallest normals"),
               cases=_locality_cases, pinned=_locality_pinned)
def test_locality(bind, case):
    e, p, scale = case["expect"], case["position"], 2.0 ** case["log2 scale"]
    d = e.head_dim
    out = probe.basis(lambda x, pos: bind(e)(x * scale, pos), d, p)
    allowed = np.eye(d, dtype=bool)
    allowed[e.rotated] = False  # rotated dims go where the convention writes their pair
    for (a, b), (oa, ob) in zip(e.pairs(), e.out_pairs()):
        allowed[a, [oa, ob]] = allowed[b, [oa, ob]] = True
    leaked = np.where(allowed, 0.0, out)
    return assert_zero("f(e_j, p)", leaked, tolerance.atol(e), rule=f"only the dims paired with j may change "
                       f"({e.convention} convention)", call=f"basis vector e_j (row j) at position {np.asarray(p).tolist()}", index_names=("j", "dim"))



def _has_passthrough(impl):
    e = impl.expect
    if e is not None and e.rotary_dim == e.head_dim and not e.method.still_pairs(e):
        return f"the expectation rotates every dim (rotary_dim = head_dim = {e.head_dim}): nothing passes through"
    return None


def _still(e) -> tuple[list[int], list[int]]:
    """The input dims of the pairs of frequency 0 and the dims they are written to."""
    pairs = list(zip(e.pairs(), e.out_pairs()))
    return ([j for i in e.method.still_pairs(e) for j in pairs[i][0]],
            [j for i in e.method.still_pairs(e) for j in pairs[i][1]])


@rope_property("rope.partial-passthrough",
               rule=("exact: dims at and beyond rotary_dim, and those of the pairs of frequency 0, come back bit for "
                     "bit"),
               cases=lambda impl: rows_cases(impl, partial=True),
               pinned=lambda impl: rows_pinned(impl, partial=True), skip_if=_has_passthrough)
def test_partial_passthrough(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    rest = e.passthrough
    y = bind(e)(x, pos)
    if rest.size:
        assert_equal("f(x, p)", y[:, rest], x[:, rest], call=f"the {rest.size} pass-through dims ({dim_runs(rest)}) of "
                     f"f(x, positions={pos.tolist()})", index_names=("row", "pass-through dim"))
    ins, outs = _still(e)
    if ins:
        assert_equal("f(x, p)", y[:, outs], x[:, ins], call=f"the dims of the pairs of frequency 0 ({len(ins)} dims, "
                     f"{outs[0]}, {outs[1]}, ...) of f(x, positions={pos.tolist()})", index_names=("row", "still dim"))
    return 0.0
