"""Spec section "axes": multi-axis RoPE (vision-language, image and video models). Positions are vectors, one integer
per axis; pair j turns with the position on its own axis. These properties are about multi-axis implementations only;
the rotation, structure and contract sections check them too, with position vectors of unequal axes."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from ropespec.properties.assertions import assert_close
from ropespec.properties.cases import PINNED_AXES, expect_strategy, pinned_rows_of
from ropespec.properties.framework import rope_property
from ropespec.properties.numerics import exact, output_bound, to_output_dims
from ropespec.properties.strategies import axes_expectations, make_vectors, position_rows, positions, vectors
from ropespec.spec.expectation import Expect

#: the fields that make an expectation multi-axis; without them it is the 1-D RoPE of the same dims and base
ONE_D = {"mrope_section": None, "mrope_interleaved": False, "axes_dims_rope": None, "axes_parity": False,
         "axis_names": None, "axes_offset": None, "axes_scale": None, "axes_ladder": "theta", "axes_interleaved": False}


def _multi_axis(kinds):
    """not_about: the property is about multi-axis implementations (of ``kinds``) only."""
    def not_about(impl):
        if impl.multi_axis is None:
            return "about multi-axis RoPE: this implementation is checked as 1-D RoPE"
        if impl.expect is not None and impl.expect.axes_kind() not in kinds:
            return f"about {' and '.join(kinds)} multi-axis RoPE, not {impl.expect.axes_kind()}"
        if impl.expect is None and not set(impl.axes) & set(kinds):
            return f"about {' and '.join(kinds)} multi-axis RoPE, which this factory does not declare"
        return None
    return not_about


def _axes_strategy(impl, kinds):
    if impl.expect is not None:
        return expect_strategy(impl)
    mine = tuple(k for k in impl.axes if k in kinds)
    drawn = axes_expectations(kinds=mine, dtype=impl.dtype, max_position=impl.max_position)
    return drawn.map(lambda e: e.replace(**impl.promise)) if impl.promise else drawn


def _axes_pinned(impl, kinds) -> list[Expect]:
    """The fixed expectation when it is of ``kinds``; for a factory, the pinned expectation of each of ``kinds`` it
    declares."""
    if impl.expect is not None:
        return [impl.expect] if impl.expect.axes_kind() in kinds else []
    base = Expect(dtype=impl.dtype, max_position=impl.max_position, **impl.promise)
    return [PINNED_AXES[k](base) for k in kinds if k in impl.axes]


EVERY = ("chunked", "interleaved", "per-axis", "parity")
SHARED = ("chunked", "interleaved")
PER_AXIS = ("per-axis",)


# -- axis separation --------------------------------------------------------------------------------------------
def _separation_cases(impl):
    @st.composite
    def build(draw):
        e = draw(_axes_strategy(impl, EVERY), label="expect")
        n = draw(st.integers(1, 4), label="n")
        pos = draw(position_rows(e, n, max_value=e.max_position), label="positions")
        axis = draw(st.integers(0, e.n_axes - 1), label="axis")
        # each row moves to another position of the domain on that axis: (p + step) mod max_position, step in
        # [1, max_position): never onto itself, never outside [0, max_position)
        steps = draw(st.lists(st.integers(1, e.max_position - 1), min_size=n, max_size=n), label="steps")
        to = (pos[:, axis] + np.array(steps, dtype=np.int64)) % e.max_position
        return {"expect": e, "positions": pos, "axis": axis, "to": to, "x": draw(vectors(e, n), label="x")}

    return build()


def _separation_pinned(impl):
    """Every axis of the pinned rows (0, 1 and max_position - 1 on each) moved one step on, max_position - 1 wrapping
    to 0."""
    out = []
    for e in _axes_pinned(impl, EVERY):
        pos = pinned_rows_of(impl, e)
        for axis in range(e.n_axes):
            out.append({"expect": e, "positions": pos, "axis": axis, "to": (pos[:, axis] + 1) % e.max_position,
                        "x": make_vectors(e, len(pos))})
    return out


@rope_property("axes.separation",
               rule=("component_bound of each call: both outputs of a pair of another axis are within their bound of "
                     "the same exact value, so they differ by at most the sum"),
               cases=_separation_cases, pinned=_separation_pinned, not_about=_multi_axis(EVERY))
def test_separation(bind, case):
    e, pos, axis, x = case["expect"], case["positions"], case["axis"], case["x"]
    f = bind(e)
    moved = pos.copy()
    moved[:, axis] = case["to"]
    y0, y1 = f(x, pos), f(x, moved)
    others = [j for j, own in enumerate(e.pair_axes()) if own != axis]
    if not others:
        return 0.0
    dims = [o for j in others for o in e.out_pairs()[j]]
    bound = output_bound(e, x, pos)[:, dims] + output_bound(e, x, moved)[:, dims]
    name = e.axes[axis]
    return assert_close(f"f(x, p with {name} moved) on the other axes' pairs", y1[:, dims], y0[:, dims], bound,
                        call=f"axis {name} moved from {pos[:, axis].tolist()} to {moved[:, axis].tolist()} at positions "
                             f"{pos.tolist()}; dims {dims[:8]}{'...' if len(dims) > 8 else ''} belong to pairs of other "
                             f"axes", dtype=e.dtype, against="f(x, p)", index_names=("row", "other-axis dim"))


# -- text tokens of a shared ladder: 1-D RoPE -------------------------------------------------------------------
def _text_cases(impl):
    @st.composite
    def build(draw):
        e = draw(_axes_strategy(impl, SHARED), label="expect")
        n = draw(st.integers(1, 6), label="n")
        m = draw(st.lists(positions(max_value=e.max_position), min_size=n, max_size=n), label="m")
        return {"expect": e, "m": np.array(m, dtype=np.int64), "x": draw(vectors(e, n), label="x")}

    return build()


def _text_pinned(impl):
    return [{"expect": e, "m": np.array([0, 1, e.max_position - 1], dtype=np.int64), "x": make_vectors(e, 3)}
            for e in _axes_pinned(impl, SHARED)]


def _shared_offset(impl) -> str | None:
    """not_about: with offsets that differ between the axes, a text token (m on every axis) is no 1-D RoPE."""
    e = impl.expect
    if e is not None and e.axes_offset and len(set(e.axes_offset)) > 1:
        return f"the axes' offsets {list(e.axes_offset)} differ: a text token turns as no 1-D RoPE does"
    if e is not None and (e.axes_scale or not e.integer_offsets):
        return "its axes' coordinates are real numbers (axes_offset, axes_scale): a text token is no 1-D RoPE's"
    return _multi_axis(SHARED)(impl)


@rope_property("axes.text-reduction",
               rule=("component_bound of 1-D RoPE at m (rope.conformance's), against the 1-D reference"),
               cases=_text_cases, pinned=_text_pinned, not_about=_shared_offset)
def test_text_reduction(bind, case):
    e, m, x = case["expect"], case["m"], case["x"]
    rows = np.repeat(m[:, None], e.n_axes, axis=1)
    y = bind(e)(x, rows)
    one_d = e.replace(**ONE_D)
    at = m + (e.axes_offset[0] if e.axes_offset else 0)  # every axis's offset alike (_shared_offset)
    one_d = one_d.replace(max_position=max(one_d.max_position, int(at.max()) + 1))
    want, own = exact(one_d, x, at)
    return assert_close("f(x, (m, ..., m))", y, want, output_bound(one_d, x, at) + own,
                        call=f"text tokens at m = {m.tolist()} on every axis, against 1-D RoPE at m"
                             f"{' + offset' if e.axes_offset else ''} ({one_d.describe()})", dtype=e.dtype)


# -- one axis of per-axis ladders: 1-D RoPE of that axis ------------------------------------------------------------
def _one_axis_cases(impl):
    @st.composite
    def build(draw):
        e = draw(_axes_strategy(impl, PER_AXIS), label="expect")
        n = draw(st.integers(1, 6), label="n")
        axis = draw(st.integers(0, e.n_axes - 1), label="axis")
        m = draw(st.lists(positions(max_value=e.max_position), min_size=n, max_size=n), label="m")
        return {"expect": e, "axis": axis, "m": np.array(m, dtype=np.int64), "x": draw(vectors(e, n), label="x")}

    return build()


def _one_axis_pinned(impl):
    return [{"expect": e, "axis": a, "m": np.array([0, 1, e.max_position - 1], dtype=np.int64), "x": make_vectors(e, 3)}
            for e in _axes_pinned(impl, PER_AXIS) for a in range(e.n_axes)]


def _one_axis_rope(e: Expect, axis: int, x: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The expected f(x, m e_axis) built from the 1-D reference alone: each axis's pairs gathered in order into a
    vector of d_a dims, rotated as 1-D interleaved RoPE of d_a dims (the ladder theta^(-2k/d_a)) at that axis's
    position (m on ``axis``, 0 on the others) plus its offset, written back where e writes them; a pair whose axis
    sits at 0 with no offset is unchanged. And that reference's own error per component."""
    want = to_output_dims(e, x)
    err = np.zeros_like(want)
    offsets = e.axes_offset or (0,) * e.n_axes
    scales = e.axes_scale or (1,) * e.n_axes
    for a in range(e.n_axes):
        if a != axis and not offsets[a]:
            continue
        # the axis's coordinate, (m + offset) x scale, exactly (Fractions: the 1-D reference turns by it unrounded)
        p = np.array([(Fraction(int(v)) + Fraction(offsets[a])) * Fraction(scales[a])
                      for v in (m if a == axis else np.zeros_like(m))], dtype=object)
        if all(v.denominator == 1 for v in p):
            p = p.astype(np.int64)
        mine = [j for j, own in enumerate(e.pair_axes()) if own == a]
        d_a = e.axes_dims_rope[a]
        flat = np.array([[x[row, i] for j in mine for i in e.pairs()[j]] for row in range(len(x))])
        # the axis's own ladder as a 1-D RoPE: theta^(-2k/d_a) is 1-D RoPE of d_a dims; another rule (LTX-Video's
        # ascending theta^(k/(K - 1))) is the single axis of a per-axis expectation of d_a dims with that rule
        ladder = {} if e.axes_ladder == "theta" else {"axes_dims_rope": [d_a], "axes_ladder": e.axes_ladder}
        one_d = Expect(head_dim=d_a, rope_theta=e.rope_theta, convention="interleaved", dtype=e.dtype,
                       max_position=max(e.max_position, int(np.abs(p).max()) + 1), angle_dtype=e.angle_dtype,
                       inv_freq_dtype=e.inv_freq_dtype, **ladder)
        turned, own = exact(one_d, flat, p)
        for k, j in enumerate(mine):
            oa, ob = e.out_pairs()[j]
            want[:, oa], want[:, ob] = turned[:, 2 * k], turned[:, 2 * k + 1]
            err[:, oa], err[:, ob] = own[:, 2 * k], own[:, 2 * k + 1]
    return want, err


@rope_property("axes.one-axis",
               rule=("component_bound at the vector m e_a (the other axes at 0, where only rounding is allowed), "
                     "against 1-D RoPE of d_a dims for a's pairs and the identity elsewhere"),
               cases=_one_axis_cases, pinned=_one_axis_pinned, not_about=_multi_axis(PER_AXIS))
def test_one_axis(bind, case):
    e, axis, m, x = case["expect"], case["axis"], case["m"], case["x"]
    rows = np.zeros((len(m), e.n_axes), dtype=np.int64)
    rows[:, axis] = m
    y = bind(e)(x, rows)
    want, own = _one_axis_rope(e, axis, x, m)
    return assert_close(f"f(x, m e_{e.axes[axis]})", y, want, output_bound(e, x, rows) + own,
                        call=f"m = {m.tolist()} on axis {e.axes[axis]}, 0 on the others: 1-D RoPE of "
                             f"{e.axes_dims_rope[axis]} dims on its pairs, the identity elsewhere", dtype=e.dtype)


# -- a documented non-invariant: equal axes of per-axis ladders are no 1-D RoPE ------------------------------------
@rope_property("axes.equal-axes-differ",
               rule=("as axes.text-reduction: component_bound of 1-D RoPE at m, against the 1-D reference; expected "
                     "to fail"),
               cases=lambda impl: st.fixed_dictionaries({
                   "expect": _axes_strategy(impl, PER_AXIS), "m": st.integers(1, 1000).map(lambda v: np.array([v])),
                   "seed": st.integers(0, 2**16)}),
               pinned=lambda impl: [{"expect": e, "m": np.array([1]), "seed": 0} for e in _axes_pinned(impl, PER_AXIS)],
               not_about=_multi_axis(PER_AXIS), max_examples=10)
def test_equal_axes_differ(bind, case):
    e, m = case["expect"], case["m"]
    x = make_vectors(e, 1, seed=case["seed"])
    y = bind(e)(x, np.repeat(m[:, None], e.n_axes, axis=1))
    one_d = e.replace(**ONE_D)
    want, own = exact(one_d, x, m)
    return assert_close("f(x, (m, ..., m))", y, want, output_bound(one_d, x, m) + own,
                        call=f"m = {int(m[0])} on every axis, against 1-D RoPE at m ({one_d.describe()})",
                        dtype=e.dtype)

