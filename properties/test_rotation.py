"""Spec section "rotation": norm per pair, relative position, identity at 0, composition.

These compare the implementation with itself, so they hold for any base and need no reference;
their bounds come from the same tolerance model as conformance.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import output_bound, pair_norms, to_input_dims, to_output_dims
from ropespec.properties.cases import expect_strategy, pinned_expects, rows_cases, rows_pinned
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import make_vectors, pinned_rows, position_vectors, positions, vectors
from ropespec.spec import tolerance

_U64 = 2.0**-53


def _p(v) -> str:
    """A position as a message shows it: 7, or (7, 0, 3) for a position vector."""
    return str(int(v)) if np.ndim(v) == 0 else "(" + ", ".join(str(int(a)) for a in v) + ")"


def _tau(e, x, pos):
    """Allowed error of each output component of f(x, pos), bounded whatever the convention (these
    properties hold for any convention and must not fail for a wrong one)."""
    return output_bound(e, x, pos, convention_free=True)


@rope_property("rope.norm-per-pair",
               rule=("norm_bound: sqrt(2) (atol + ||x_pair|| rotation_rtol); a wrong angle keeps the norm, so "
                      "only the rotation's rounding counts"),
               cases=rows_cases, pinned=rows_pinned)
def test_norm_per_pair(bind, case):
    e, x, pos = case["expect"], case["x"], case["positions"]
    y = bind(e)(x, pos)
    g = reference.attention_factor(e)
    gx = g * pair_norms(e, x)  # the attention factor scales every pair
    got = pair_norms(e, y, output=True)
    try:
        return assert_close(
            "||f(x, p)_pair||", got, gx, tolerance.norm_bound(e, gx),
            call=f"f(x, positions={pos.tolist()})", index_names=("row", "pair"), dtype=e.dtype,
        )
    except Failure as err:
        scaled = _one_scale(got, gx / g, tolerance.norm_bound(e, gx))
        if scaled is not None:  # every pair scaled alike, by another factor: what the attention factor says
            raise err.named("attention-factor", f"every pair comes out {scaled:.6g} times its input, expected the "
                                                f"attention factor {g:.6g}") from None
        raise


def _one_scale(got: np.ndarray, norms: np.ndarray, bound: np.ndarray) -> float | None:
    """The one factor c with got = c norms for every pair, to within the bound, or None."""
    keep = norms > 0
    if not keep.any():
        return None
    c = float(np.median(got[keep] / norms[keep]))
    return c if np.all(np.abs(got - c * norms) <= bound) else None


def _relative_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        m = draw(position_vectors(e, max_value=e.max_position), label="m")
        n = draw(position_vectors(e, max_value=e.max_position), label="n")
        if e.multi_axis:  # per axis: along one axis (the others still), or along several at once
            moving = draw(st.lists(st.booleans(), min_size=e.n_axes, max_size=e.n_axes), label="axes shifted")
            s = np.array([draw(st.integers(-int(min(m[a], n[a])), e.max_position - 1 - int(max(m[a], n[a]))), label="shift")
                          if moving[a] else 0 for a in range(e.n_axes)], dtype=np.int64)
        else:
            s = draw(st.integers(-min(m, n), e.max_position - 1 - max(m, n)), label="shift")
        qk = draw(vectors(e, 2), label="q, k")
        return {"expect": e, "m": m, "n": n, "shift": s, "q, k": qk}

    return build()


def _relative_pinned(impl):
    top = impl.max_position - 1
    third = top // 3  # (0, third) against (third, 2 third): tables that wrap break one of the two
    out = []
    for e in pinned_expects(impl):
        if not e.multi_axis:
            out += [{"expect": e, "m": m, "n": n, "shift": s, "q, k": make_vectors(e, 2)}
                    for m, n, s in ((0, 1, top - 1), (0, third, third))]
            continue
        A = e.n_axes
        m, n = pinned_rows(e, [0, 1, third])[:2]  # unequal axes, every axis at its own positions
        for a in range(A):  # each axis alone, to its far end, then all axes together
            shift = np.zeros(A, dtype=np.int64)
            shift[a] = top - max(m[a], n[a])
            out.append({"expect": e, "m": m, "n": n, "shift": shift, "q, k": make_vectors(e, 2)})
        out.append({"expect": e, "m": m, "n": n, "shift": np.full(A, third, dtype=np.int64) - np.minimum(m, n),
                    "q, k": make_vectors(e, 2)})
    return out


@rope_property("rope.relative-position",
               rule=("each side's score error from component_bound per pair (|<a, b> - <a*, b*>| <= sum |a| "
                      "tau_b + |b| tau_a + tau_a tau_b), plus float64 rounding of the two dot products"),
               cases=_relative_cases, pinned=_relative_pinned)
def test_relative_position(bind, case):
    e, m, n, s, qk = case["expect"], case["m"], case["n"], case["shift"], case["q, k"]
    x = np.concatenate([qk, qk])
    pos = np.array([m, n, np.add(m, s), np.add(n, s)], dtype=np.int64)
    y = bind(e)(x, pos)
    tau = _tau(e, x, pos)
    scores = np.array([y[0] @ y[1], y[2] @ y[3]])
    # |<a, b> - <a*, b*>| <= sum(|a| tau_b + |b| tau_a + tau_a tau_b) (|a| read as |a*| + tau_a), per side,
    # plus float64 rounding of the two dot products.
    side = lambda i, j: np.sum((np.abs(y[i]) + tau[i]) * tau[j] + (np.abs(y[j]) + tau[j]) * tau[i] + tau[i] * tau[j])
    rounding = 2 * e.head_dim * _U64 * (np.abs(y[0] * y[1]).sum() + np.abs(y[2] * y[3]).sum())
    bound = side(0, 1) + side(2, 3) + rounding + tolerance.atol(e)
    return assert_close(
        "<f(q, m+s), f(k, n+s)>", scores[1:], scores[:1], bound,
        call=f"<f(q, {_p(m)}), f(k, {_p(n)})> = {float(scores[0])!r} vs shift {_p(s)}", index_names=("score",),
        dtype=e.dtype,
        against=f"<f(q, m), f(k, n)>",
    )


def _identity_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        return {"expect": e, "x": draw(vectors(e, draw(st.integers(1, 8), label="n")), label="x")}

    return build()


@rope_property(
    "rope.identity-at-zero",
               rule=("component_bound at p = 0: the rotation's rounding only (no angle error at angle 0)"),
               cases=_identity_cases,
    pinned=lambda impl: [{"expect": e, "x": make_vectors(e, 3)} for e in pinned_expects(impl)],
    not_about=lambda impl: ("its axes turn by their offsets at position 0 (axes_offset): no position of the domain is "
                            "the identity" if impl.expect is not None and impl.expect.axes_offset else None),
)
def test_identity_at_zero(bind, case):
    e, x = case["expect"], case["x"]
    pos = np.zeros(e.position_shape(len(x)), dtype=np.int64)
    y = bind(e)(x, pos)
    gx = x.copy()
    gx[:, e.rotated] *= reference.attention_factor(e)  # the attention factor scales the rotated dims
    gx = to_output_dims(e, gx)  # written where the convention puts each pair (rope_interleave moves them)
    try:
        return assert_close("f(x, 0)", y, gx, _tau(e, x, pos), call="f(x, positions=0)", dtype=e.dtype)
    except Failure as err:
        g, r, rest = reference.attention_factor(e), e.rotated, e.passthrough
        yi, tau = to_input_dims(e, y), to_input_dims(e, _tau(e, x, pos))
        c = float(np.median(yi[:, r][x[:, r] != 0] / x[:, r][x[:, r] != 0])) if np.any(x[:, r] != 0) else None
        if c is not None and np.all(np.abs(yi[:, r] - c * x[:, r]) <= tau[:, r]) and \
                np.all(np.abs(yi[:, rest] - x[:, rest]) <= tau[:, rest]):  # the identity, scaled by another factor
            raise err.named("attention-factor", f"f(x, 0) is {c:.6g} x on the rotary dims, expected the attention "
                                                f"factor {g:.6g} times x") from None
        raise


def _composition_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        a = draw(position_vectors(e, max_value=e.max_position), label="a")
        if e.multi_axis:  # a + b + the axis's offset (what f(f(x, a), b) turns by) inside the domain too
            o = e.axes_offset or (0,) * e.n_axes
            # b itself in [0, max_position) and a + b + o in it too: b in [max(0, -a - o), min(P - a - o, P))
            lows = [max(0, -int(v) - int(c)) for v, c in zip(a, o)]
            tops = [min(e.max_position - int(v) - int(c), e.max_position) for v, c in zip(a, o)]
            if any(lo >= t for lo, t in zip(lows, tops)):
                reject()
            b = np.array([draw(positions(min_value=lo, max_value=t), label="b") for lo, t in zip(lows, tops)],
                         dtype=np.int64)
        else:
            b = draw(positions(max_value=e.max_position - a), label="b")
        return {"expect": e, "a": a, "b": b, "x": draw(vectors(e, draw(st.integers(1, 4), label="n")), label="x")}

    return build()


def _composition_pinned(impl):
    top = impl.max_position - 1
    out = []
    for e in pinned_expects(impl):
        a, b = (1, top - 1) if not e.multi_axis else (pinned_rows(e, [1, 0, 2])[0], pinned_rows(e, [top - 1, 1, 0])[0])
        if e.axes_offset and e.integer_offsets:  # a + b + offset inside the domain, [0, top]
            o = np.array(e.axes_offset, dtype=np.int64)
            lo, hi = np.maximum(0, -a - o), np.minimum(top - a - o, top)
            if np.any(lo > hi):
                continue  # no b puts a + b + o inside the domain on every axis (a drawn case finds one)
            b = np.clip(b, lo, hi)
        out.append({"expect": e, "a": a, "b": b, "x": make_vectors(e, 2)})
    return out


def _static_table(impl):
    e = impl.expect
    if e is not None and not e.integer_offsets:
        return (f"its axes' offsets {list(e.axes_offset)} are not integers: f(f(x, a), b) turns by a + b + 2 o, which "
                "no position of the domain's f turns by (the conformance and relative properties check it)")
    if e is not None and e.method.length_dependent:
        return (f"rope_type {e.rope_type!r} changes its frequencies with each call's length, so calls at "
                "a, b and a + b rotate with different tables (decode consistency covers this)")
    return None


@rope_property("rope.composition",
               rule=("component_bound of each of the three calls, the first propagated through the second (a "
                      "rotation keeps norms): sqrt(2) g tau(x, a) + tau(f(x, a), b) + g tau(x, a + b)"),
               cases=_composition_cases, pinned=_composition_pinned, skip_if=_static_table)
def test_composition(bind, case):
    e, a, b, x = case["expect"], case["a"], case["b"], case["x"]
    f = bind(e)
    k = len(x)
    g = reference.attention_factor(e)
    # R(a + o) R(b + o) = R(a + b + 2 o) = f at a + b + o, with o the axes' offsets (0 but with axes_offset)
    ab = np.add(a, b) + (np.array(e.axes_offset) if e.axes_offset else 0)
    pa, pb, pab = (np.broadcast_to(np.asarray(v, dtype=np.int64), e.position_shape(k)).copy() for v in (a, b, ab))
    y1 = to_input_dims(e, f(x, pa))  # read back as pairs (rope_interleave writes another layout)
    twice = f(y1, pb)
    once = f(x, pab)
    once[:, e.rotated] *= g  # twice carries the attention factor twice: f(f(x, a), b) = g f(x, a + b)
    # the error of f(x, a) is rotated and scaled by the second call (each component at most sqrt(2) g
    # times the pair's bound)
    bound = math.sqrt(2) * g * _tau(e, x, pa) + _tau(e, y1, pb) + g * _tau(e, x, pab)
    return assert_close("f(f(x, a), b)", twice, once, bound, call=f"a={_p(a)}, b={_p(b)}: f(x, {_p(ab)})",
                        dtype=e.dtype,
                        against=f"f(x, a + b)")
