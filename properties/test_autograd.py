"""Spec section "autograd": for torch implementations that support it, the gradient with respect to x
is the inverse rotation of the upstream gradient (R is orthogonal: its Jacobian is R, so the
gradient is R^T g = R(-p) g), times the attention factor; pass-through dims get g unchanged."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import reference
from implementations.contract import Failure
from properties.assertions import assert_close
from properties.numerics import output_bound, to_input_dims
from properties.cases import expect_strategy, pinned_expects
from properties.framework import NotChecked, rope_property
from properties.strategies import make_vectors, pinned_rows, position_rows, vectors
from spec.scaling import SEQ_LEN_DEPENDENT


def _cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        n = draw(st.integers(1, 6), label="n")
        pos = draw(position_rows(e, n, max_value=e.max_position), label="positions")
        return {"expect": e, "positions": pos, "x": draw(vectors(e, n), label="x"),
                "g": draw(vectors(e, n), label="upstream gradient")}

    return build()


def _applies(impl):
    if impl.array != "torch":
        return "autograd is checked for torch implementations (--array torch)"
    s = impl.shape
    shape = (f"a --form {s.form} function" if s.form in ("kernel", "qk") and s.table is None else
             f"the {s.rows} layout" if s.rows != "nd" else "an in-place function" if s.inplace else None)
    if shape is not None:  # said, so that a custom backward is never assumed to have been checked
        return (f"the backward was not checked: autograd is checked on f(x, positions) in the nd layout, out of place, "
                f"and this is {shape}")
    if impl.expect is not None and impl.expect.rope_type in SEQ_LEN_DEPENDENT:
        return "the frequencies depend on the call's length"
    return None


@rope_property("autograd.inverse-rotation",
               rule=("component_bound of the upstream gradient rotated back, in the input layout"),
               cases=_cases, skip_if=_applies,
               pinned=lambda impl: [{"expect": e, "positions": pinned_rows(e, [0, 1, 7]), "x": make_vectors(e, 3),
                                        "g": make_vectors(e, 3, seed=1)} for e in pinned_expects(impl)])
def test_inverse_rotation(bind, case):
    e, pos, x, g = case["expect"], case["positions"], case["x"], case["g"]
    try:
        grad = bind(e).grad(x, pos, g)
    except NotImplementedError as err:  # no autograd, or not in this call shape: the implementation's, not the case's
        raise NotChecked(f"the backward was not checked: {err}") from None
    # f = L R(p) with L where the convention writes each pair (the identity but for rope_interleave): the
    # gradient is R(-p) L^T g, in the input's layout, scaled by the attention factor like the forward
    h = to_input_dims(e, g)
    want = to_input_dims(e, reference.apply(e, h, -pos))
    bound = to_input_dims(e, output_bound(e, h, pos))
    try:
        return assert_close("d<f(x, p), g>/dx", grad, want, bound,
                            call=f"backward at positions {pos.tolist()}: should be R(-p) g", dtype=e.dtype)
    except Failure as err:
        if np.all(np.abs(grad - to_input_dims(e, reference.apply(e, h, pos))) <= bound):
            raise Failure(f"{err.message} -- direction: the gradient is R(+p) g, the forward rotation, not its "
                          "inverse: the backward forgot the sign", "direction") from None
        raise
