"""Spec section "autograd": for an implementation with a backward pass (torch autograd, a custom autograd.Function,
a Triton kernel's own backward branch, jax.vjp), the gradient of <g, f(x)> with respect to x is the inverse rotation
of the upstream gradient: R is orthogonal, so its Jacobian's transpose is R(-p), times the attention factor;
pass-through dims get g unchanged. Checked in every form and layout the implementation is called in: the apply
function (nd, the batched layouts, packed thd, vLLM's query and key, in place), the kernel kernel(x, cos, sin) and
transformers' apply(q, k, cos, sin) with ropespec's exact table.
"""

from __future__ import annotations

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.families import forms_of
from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.cases import decoding_case, expect_strategy, pinned_expects
from ropespec.properties.diagnose import root_cause
from ropespec.properties.framework import NotChecked, rope_property
from ropespec.properties.numerics import output_bound, pair_norms, per_dim, to_input_dims
from ropespec.properties.strategies import make_vectors, pinned_rows, position_rows, positions, vectors
from ropespec.reference.table import rotated
from ropespec.spec import tolerance
from ropespec.spec import layouts
from ropespec.spec.angles import rounded_table
from ropespec.spec.definitions import token_positions


def _skip(impl):
    if impl.array not in ("torch", "jax"):
        return "autograd is checked for torch implementations (--array torch) and jax ones (--array jax)"
    if impl.array == "jax" and not impl.shape.plain:
        return "the backward was not checked: a jax implementation's is checked in the nd layout (jax.vjp)"
    if impl.expect is not None and impl.expect.method.length_dependent and impl.shape.declared.applies:
        return "the frequencies depend on the call's length"
    return None


def _cases(impl):
    (form, rows), declared = (impl.shape.form, impl.shape.rows), impl.shape.declared

    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        top = e.max_position
        if layouts.get(rows).packed and e.multi_axis:
            reject()  # packed sequences carry 1-D offsets
        if declared.handed_a_table:  # the table of drawn positions, handed over as op_kernel / op_qk hand it
            b, s_ = (draw(st.integers(1, 2), label="batch"), draw(st.integers(1, 3), label="seq")) if declared.q_and_k else (1, 0)
            n = b * s_ if declared.q_and_k else draw(st.integers(1, 6), label="n")
            case = {"expect": e, "form": form, "positions": draw(position_rows(e, n, max_value=top), label="positions")}
            if declared.q_and_k:
                kv = draw(st.integers(1, 2), label="h_kv")
                hq = kv * draw(st.integers(1, 2), label="group")
                case.update(q=draw(vectors(e, b * hq * s_), label="q").reshape(b, hq, s_, e.head_dim),
                            k=draw(vectors(e, b * kv * s_), label="k").reshape(b, kv, s_, e.head_dim),
                            gq=draw(vectors(e, b * hq * s_), label="gq").reshape(b, hq, s_, e.head_dim),
                            gk=draw(vectors(e, b * kv * s_), label="gk").reshape(b, kv, s_, e.head_dim))
                case["positions"] = case["positions"].reshape((b, s_) + case["positions"].shape[1:])
            else:
                case.update(x=draw(vectors(e, n), label="x"), g=draw(vectors(e, n), label="upstream gradient"))
            return case
        case = {"expect": e, "form": form, "layout": rows}
        if layouts.get(rows).plain:
            n = draw(st.integers(1, 6), label="n")
            shape = (n,)
            case["positions"] = draw(position_rows(e, n, max_value=top), label="positions")
        elif layouts.get(rows).packed:
            lengths = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2), label="sequence lengths")
            offsets = draw(st.lists(positions(max_value=top - 3), min_size=len(lengths), max_size=len(lengths)),
                           label="offsets")
            cu = np.cumsum([0, *lengths])
            case.update(positions=np.array(offsets, dtype=np.int64), cu_seqlens=cu)
            if impl.shape.positions == "per-token":  # each token's own position, as the call shape says
                case.update(positions=token_positions(case["positions"], cu), per_token=True)
            shape = (sum(lengths), draw(st.integers(1, 2), label="heads"))
        elif layouts.get(rows).keys_apart:
            t, kv = draw(st.integers(1, 3), label="tokens"), draw(st.integers(1, 2), label="h_kv")
            shape = (t, kv * draw(st.integers(1, 2), label="group"))
            case["positions"] = draw(position_rows(e, t, max_value=top), label="positions")
            case["key"] = draw(vectors(e, t * kv), label="key").reshape(t, kv, e.head_dim)
            case["g_key"] = draw(vectors(e, t * kv), label="key gradient").reshape(t, kv, e.head_dim)
        else:
            b, s_ = draw(st.integers(1, 2), label="batch"), draw(st.integers(1, 3), label="seq")
            pos = draw(position_rows(e, b * s_, max_value=top), label="positions")
            case["positions"] = pos.reshape((b, s_) + pos.shape[1:])
            shape = (b, s_, draw(st.integers(1, 2), label="heads"))
        case["x"] = draw(vectors(e, int(np.prod(shape))), label="x").reshape(*shape, e.head_dim)
        case["g"] = draw(vectors(e, int(np.prod(shape))), label="upstream gradient").reshape(*shape, e.head_dim)
        return case

    return build()


def _pinned(impl):
    (form, rows), declared = (impl.shape.form, impl.shape.rows), impl.shape.declared
    out = []
    for e in pinned_expects(impl):
        pos = pinned_rows(e, [0, 1, 7])
        if declared.q_and_k:
            q = make_vectors(e, 6).reshape(1, 2, 3, e.head_dim)
            k = make_vectors(e, 3, seed=2).reshape(1, 1, 3, e.head_dim)
            out.append({"expect": e, "form": form, "positions": pos.reshape((1, 3) + pos.shape[1:]), "q": q, "k": k,
                        "gq": make_vectors(e, 6, seed=3).reshape(q.shape), "gk": make_vectors(e, 3, seed=4).reshape(k.shape)})
            dec = dict(decoding_case(e), form=form)
            dec.update(gq=make_vectors(e, dec["q"].size // e.head_dim, seed=5).reshape(dec["q"].shape),
                       gk=make_vectors(e, dec["k"].size // e.head_dim, seed=6).reshape(dec["k"].shape))
            out.append(dec)
        elif declared.handed_a_table or layouts.get(rows).plain:
            case = {"expect": e, "form": form, "positions": pos, "x": make_vectors(e, 3), "g": make_vectors(e, 3, seed=1)}
            out.append(case if declared.handed_a_table else dict(case, layout="nd"))
        elif layouts.get(rows).batched:  # two batch rows at their own positions (left padding), two heads
            p4 = pinned_rows(e, [3, 4, 7, 8])
            out.append({"expect": e, "form": form, "layout": rows, "positions": p4.reshape((2, 2) + p4.shape[1:]),
                        "x": make_vectors(e, 8).reshape(2, 2, 2, e.head_dim),
                        "g": make_vectors(e, 8, seed=1).reshape(2, 2, 2, e.head_dim)})
    return out


def _element_positions(e, case) -> np.ndarray:
    """The position of every row of x (and of key, for vllm), flattened: (rows,) or (rows, A)."""
    x = case["x"]
    tail = (e.n_axes,) if e.multi_axis else ()
    if "cu_seqlens" in case:
        per_token = case["positions"] if case.get("per_token") else token_positions(case["positions"], case["cu_seqlens"])
        return np.repeat(per_token, x.shape[1], axis=0)
    if "key" in case:
        per = lambda v: np.broadcast_to(case["positions"][:, None], v.shape[:-1] + tail).reshape((-1,) + tail)  # noqa: E731
        return np.concatenate([per(x), per(case["key"])])
    if x.ndim == 2:
        return case["positions"]
    return np.broadcast_to(case["positions"][:, :, None], x.shape[:-1] + tail).reshape((-1,) + tail)


def _sign_hint(name, grad, forward, bound) -> str | None:
    if np.all(np.abs(grad - forward) <= bound):
        return (f"{name} is R(+p) g, the forward rotation, not its inverse: the backward turns the same way as the "
                f"forward (its sin not negated)")
    return None


def _apply_backward(bind, case):
    e = case["expect"]
    f = bind(e)
    x, g = case["x"], case["g"]
    try:
        grads = f.grad(x, case["positions"], g, case.get("cu_seqlens"), case.get("key"), case.get("g_key"))
    except NotImplementedError as err:  # no autograd, or not in this call shape: the implementation's, not the case's
        raise NotChecked(f"the backward was not checked: {err}") from None
    d = e.head_dim
    rows = np.concatenate([v.reshape(-1, d) for v in [g] + ([case["g_key"]] if "key" in case else [])])
    got = np.concatenate([v.reshape(-1, d) for v in grads])
    pos = _element_positions(e, case)
    # f = L R(p) with L where the convention writes each pair (the identity but for rope_interleave): the gradient is
    # R(-p) L^T g, in the input's layout, scaled by the attention factor like the forward
    h = to_input_dims(e, rows)
    back = -pos - 2 * np.asarray(e.axes_offset or 0)  # R(-(p + o)): the reference adds the axes' offsets o once
    want = to_input_dims(e, reference.apply(e, h, back))
    bound = to_input_dims(e, output_bound(e, h, pos))
    try:
        return assert_close("d<f(x, p), g>/dx", got, want, bound, dtype=e.dtype,
                            call=f"backward in the {case['layout']} layout at positions "
                                 f"{np.asarray(case['positions']).tolist()}: should be R(-p) g",
                            index_names=("row", "dim"))
    except Failure as err:
        _named(err, e, got, want, bound, rows, to_input_dims(e, reference.apply(e, h, pos)))
        pos_b = case["positions"]
        if layouts.get(case["layout"]).batched and len(pos_b) > 1:
            tail = (e.n_axes,) if e.multi_axis else ()
            row0 = np.broadcast_to(pos_b[:1, :, None], case["x"].shape[:-1] + tail).reshape((-1,) + tail)
            if np.all(np.abs(got - to_input_dims(e, reference.apply(e, h, -row0 - 2 * np.asarray(e.axes_offset or 0)))) <= bound):
                raise err.named("layout", "every batch row's gradient is rotated back by batch row 0's positions: the "
                                          "other rows' positions are ignored") from None
        _detached(err, e, got, bound, rows)
        _unexplained(err, f, e)


def _rotary_hint(e, got, want, bound, g) -> str | None:
    """The rotary dims' gradients right and the pass-through dims' wrong: a backward that ignores partial rotary."""
    r, rot, rest = e.rotary_dim, e.rotated, e.passthrough
    if r == e.head_dim or not np.all(np.abs(got[:, rot] - want[:, rot]) <= bound[:, rot]):
        return None
    bad = rest[np.any(got[:, rest] != g[:, rest], axis=0)]
    return (f"the rotary dims' gradients are right, but pass-through dims {[int(j) for j in bad[:4]]} do not get g "
            f"unchanged: the backward treats another number of dims than rotary_dim {r} as rotated")


def _detached_hint(e, got, bound, g) -> str | None:
    """The rotary dims' gradient is g itself or zero: autograd saw a copy (or nothing) where the kernel rotated, as a
    Triton kernel launched outside an autograd.Function leaves it (flash-attention's apply_rotary called directly:
    only its pass-through copy is differentiable)."""
    rot = e.rotated
    head, g_head = got[:, rot], g[:, rot]
    if not np.any(g_head):
        return None
    if np.all(head == 0):
        return ("the rotary dims' gradients are all zero: autograd does not see the rotation (a kernel launched "
                "outside an autograd.Function writes where autograd records nothing)")
    if np.all(np.abs(head - g_head) <= bound[:, rot]):
        return ("the rotary dims' gradients are the upstream gradient unrotated: autograd saw a copy where the kernel "
                "rotated (a kernel launched outside an autograd.Function, into a tensor autograd took for x)")
    return None


def _named(err: Failure, e, got, want, bound, g, forward_rotation, name="the gradient"):
    """The backward's fault, from evidence: its sign, its pass-through dims, a rotation autograd does not see."""
    hint = _sign_hint(name, got, forward_rotation, bound)
    if hint:
        raise err.named("direction", hint) from None
    hint = _rotary_hint(e, got, want, bound, g)
    if hint:
        raise err.named("rotary-dim", hint) from None


def _detached(err: Failure, e, got, bound, g):
    """After the layout models (batch row 0's positions at position 0 predict g unrotated too): detached."""
    hint = _detached_hint(e, got, bound, g)
    if hint:
        raise err.named("detached", hint) from None


def _unexplained(err: Failure, forward, e):
    """A backward failure no model of a backward fault explains: a structural fault of the forward is its root cause
    (another convention, no rotation); else the failure goes to the property's diagnosis, which names the forward's
    rounding (angle-precision) only where the probes measure it, and says unknown otherwise."""
    found = root_cause(forward, e)
    if found:
        raise err.named(found[0], found[1], follows=True) from None
    raise err


def _inverse(e, g, c, s):
    """R(-phi) L^T g in the input's layout, for the table (c, s): the kernel's gradient, exact."""
    h = to_input_dims(e, g)
    inner = e.replace(convention="interleaved") if e.convention == "rope_interleave" else e
    return rotated(inner, h, c, s, sign=-1.0)


def _kernel_backward(bind, case):
    e, pos = case["expect"], case["positions"]
    f = bind(e)
    c, s = rounded_table(e, pos.reshape((-1,) + pos.shape[2:]) if "q" in case else pos)
    try:
        if "q" in case:
            b, s_ = pos.shape[:2]
            ct, st_ = c.reshape(b, s_, -1), s.reshape(b, s_, -1)
            grads = f.qk_grad(case["q"], case["k"], ct, st_, case["gq"], case["gk"])
        else:
            grads = [f.kernel_grad(case["x"], c, s, case["g"])]
    except NotImplementedError as err:
        raise NotChecked(f"the backward was not checked: {err}") from None
    worst = 0.0
    names = ("dq", "dk") if "q" in case else ("dx",)
    for name, got, g in zip(names, grads, (case["gq"], case["gk"]) if "q" in case else (case["g"],)):
        d = e.head_dim
        if g.ndim == 4:  # (b, h, s, d): every head's rows at their batch row's and token's table row
            b, h, s_ = g.shape[:3]
            cr, sr = (np.broadcast_to(t.reshape(b, 1, s_, -1), (b, h, s_, t.shape[-1])).reshape(b * h * s_, -1)
                      for t in (c, s))
        else:
            cr, sr = c, s
        g2, got2 = g.reshape(-1, d), np.asarray(got).reshape(-1, d)
        want = _inverse(e, g2, cr, sr)
        bound = to_input_dims(e, per_dim(e, tolerance.strict_bound(e, pair_norms(e, g2, output=True))))
        try:
            worst = max(worst, assert_close(f"{name} = d<g, out>/d{name[1:]}", got2, want, bound, dtype=e.dtype,
                                            call=f"backward of {case['form']} with ropespec's exact table at "
                                                 f"positions {np.asarray(pos).tolist()}: should be R(-phi) g",
                                            index_names=("row", "dim")))
        except Failure as err:
            inner = e.replace(convention="interleaved") if e.convention == "rope_interleave" else e
            _named(err, e, got2, want, bound, to_input_dims(e, g2), rotated(inner, to_input_dims(e, g2), cr, sr), name)
            if "q" in case and pos.shape[1] == 1 and pos.shape[0] > 1 and _seq_of_one_backward(f, e, case, c, s):
                raise err.named("layout", "with one token per batch row (seq 1) rows get wrong gradients, and with "
                                          "each token twice (seq 2) every row is right: the backward takes a row "
                                          "stride from the seq axis, whose stride means nothing at length 1") from None
            at_2i = _per_dim_misread(e, g2, cr, sr)
            if at_2i is not None and np.all(np.abs(got2 - at_2i) <= bound):
                raise err.named("layout", "the backward reads its one-value-per-pair table at the per-dim index 2i "
                                          "(pair i turns back by pair 2i's angle)") from None
            _detached(err, e, got2, bound, to_input_dims(e, g2))
            _unexplained(err, f.rotate_by_kernel, e)
    return worst


def _seq_of_one_backward(f, e, case, c, s) -> bool:
    """The same qk backward with each token twice (seq 2) is right: the fault is the length-1 seq axis's."""
    twice = {n: np.concatenate([case[n], case[n]], axis=2) for n in ("q", "k", "gq", "gk")}
    b = case["q"].shape[0]
    ct, st_ = (np.concatenate([t.reshape(b, 1, -1)] * 2, axis=1) for t in (c, s))
    try:
        dq, dk = f.qk_grad(twice["q"], twice["k"], ct, st_, twice["gq"], twice["gk"])
    except (NotImplementedError, Failure):
        return False
    for got, g in ((dq, twice["gq"]), (dk, twice["gk"])):
        bb, h, s_ = g.shape[:3]
        cr, sr = (np.broadcast_to(t[:, None], (bb, h, s_, t.shape[-1])).reshape(bb * h * s_, -1) for t in (ct, st_))
        g2 = g.reshape(-1, e.head_dim)
        bound = to_input_dims(e, per_dim(e, tolerance.strict_bound(e, pair_norms(e, g2, output=True))))
        if not np.all(np.abs(np.asarray(got).reshape(len(g2), -1) - _inverse(e, g2, cr, sr)) <= bound):
            return False
    return True


def _per_dim_misread(e, g, c, s):
    """The gradient of a backward that reads a per-pair table (n, r/2) at the per-dim index 2i (wrapped)."""
    k = c.shape[1]
    idx = (2 * np.arange(k)) % k
    return _inverse(e, g, c[:, idx], s[:, idx])


@rope_property("autograd.inverse-rotation",
               rule=("the apply function's: output_bound of the upstream gradient rotated back, in the input layout; a "
                     "kernel's and qk's: strict_bound (K_ROT u_out of g's pair norm), the table being given exactly"),
               cases=_cases, skip_if=_skip, pinned=_pinned)
def test_inverse_rotation(bind, case):
    return (_kernel_backward if forms_of("rope")[case["form"]].handed_a_table else _apply_backward)(bind, case)
