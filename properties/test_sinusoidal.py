"""Spec section "sinusoidal": the additive sinusoidal encoding pe(positions, d), and what additive
encodings cannot do (the score's cross terms carry absolute positions)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import per_dim
from ropespec.properties.cases import (TILE_LENGTHS, expect_strategy, listed, long_expects, long_positions, nearest_shift,
                              pinned_expects, rows_cases, rows_pinned)
from ropespec.properties.probe import SHORT_CALL
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import positions
from ropespec.reference.encodings import sinusoidal, sinusoidal_fast
from ropespec.spec import tolerance
from ropespec.spec.angles import sinusoidal_layout






def _cases(impl):
    return rows_cases(impl, partial=False, with_x=False)


def _pinned(impl):
    return rows_pinned(impl, partial=False, with_x=False) + [
        {"expect": e, "positions": long_positions(e, TILE_LENGTHS[-1])} for e in long_expects(impl)]


def _tau(e, pos):
    """Allowed error of each PE component: the bound of a unit pair at that position."""
    th = reference.thetas(e.replace(rope_scaling=None))
    return per_dim(e, tolerance.component_bound(e, np.asarray(pos), th, np.ones((len(pos), e.n_pairs))))


def _explain(f, e) -> tuple[str, str] | None:
    """Evidence for a sinusoidal encoding that fails: swapped sin/cos, the other layout, a wrapped
    table, or another frequency ladder (fairseq's exp(-k ln b / (d/2 - 1)))."""
    pos = np.array([p for p in (1, 3, 5, 33, 1000, 4097, 65521) if p < e.max_position], dtype=np.int64)
    y, tau = f.pe(pos), _tau(e, pos) * 4
    d = e.head_dim
    ex = sinusoidal(e, pos)
    if np.all(np.abs(y - ex) <= tau / 4):  # its conformance holds here: there is no fault to name
        return None

    def close(ref) -> bool:  # the output fits a model of a fault that the expected encoding itself does not fit
        return bool(np.all(np.abs(y - ref) <= tau)) and not bool(np.all(np.abs(ex - ref) <= tau))

    swapped = (ex.reshape(len(pos), d // 2, 2)[:, :, ::-1].reshape(len(pos), d) if e.convention == "interleaved"
               else np.concatenate([ex[:, d // 2 :], ex[:, : d // 2]], 1))
    if close(swapped):
        return "convention", "sin and cos trade places: the layout puts cos where sin belongs"
    other = "half" if e.convention == "interleaved" else "interleaved"
    if close(sinusoidal(e.replace(convention=other), pos)):
        return "convention", f"the layout is {'concatenated [sin | cos]' if other == 'half' else 'interleaved'}, expected {e.convention}"
    for k in range(2, 20):
        if (1 << k) <= pos.max() and close(sinusoidal(e, pos % (1 << k))):
            return "position-offset", f"PE(p) = PE(p mod {1 << k}): the table wraps"
    h = d // 2
    th = np.exp(-np.arange(h) * np.log(e.rope_theta) / max(h - 1, 1))
    ang = pos[:, None] * th[None, :]
    if close(sinusoidal_layout(np.sin(ang), np.cos(ang), e.convention)):
        return "base", "the frequencies are fairseq's exp(-k ln b / (d/2 - 1)), not b^(-2i/d)"
    diff = y - ex
    c = float(np.median(diff))
    if abs(c) > float(tau.max()) and close(ex + c):
        return "bias", f"PE(p) is the encoding plus a constant {c:.6g} at every position and dim: an affine map"
    nz = np.abs(ex) > 0.25
    if nz.any():
        g = float(np.median(y[nz] / ex[nz]))
        if abs(g - 1) > float(tau.max()) and bool(np.all(np.abs(y - g * ex) <= g * tau)):
            return "scale", f"PE(p) is the encoding times {g:.6g} (norm {np.sqrt(e.head_dim / 2) * g:.6g}, expected {np.sqrt(e.head_dim / 2):.6g})"
    alone = f.pe(pos[:1])
    if not bool(np.all(np.abs(alone - y[:1]) <= tau[:1])):
        return "length-leak", (f"PE({pos[0]}) differs when the call has {len(pos)} positions up to {pos[-1]} "
                               f"(by {float(np.max(np.abs(alone - y[:1]))):.3g}): the encoding of p depends on the others")
    return None


def _named(err: Failure, f, e) -> Failure:
    found = _explain(f, e)
    if found is None:
        return err
    return err.named(found[0], found[1])


@rope_property("sinusoidal.conformance",
               rule=("component_bound of a unit pair at that position"),
               cases=_cases, pinned=_pinned)
def test_sinusoidal_conformance(bind, case):
    e, pos = case["expect"], case["positions"]
    if len(pos) > SHORT_CALL:  # a long call against the fast reference, its own error carried by the bound
        want, tau = sinusoidal_fast(e, pos), _tau(e, pos) + tolerance.FAST_REFERENCE_ERROR
    else:
        want, tau = sinusoidal(e, pos), _tau(e, pos)
    try:
        return assert_close("PE(p)", bind(e).pe(pos), want, tau,
                            call=f"pe(positions={listed(pos)}, d={e.head_dim}); {e.convention} layout", dtype=e.dtype)
    except Failure as err:
        raise _named(err, bind(e), e) from None


@rope_property("sinusoidal.norm",
               rule=("sum over pairs of 2 (|y| + tau) tau from component_bound, plus d float64 ulp for the sum"),
               cases=_cases, pinned=_pinned)
def test_sinusoidal_norm(bind, case):
    e, pos = case["expect"], case["positions"]
    y, tau = bind(e).pe(pos), _tau(e, pos)
    sq = np.sum(y * y, axis=1)
    bound = np.sum(2 * (np.abs(y) + tau) * tau, axis=1) + e.head_dim * 2.0**-52
    try:
        return assert_close("||PE(p)||^2", sq, np.full(len(pos), e.head_dim / 2), bound,
                            call=f"positions={pos.tolist()}, d={e.head_dim}", index_names=("row",))
    except Failure as err:
        raise _named(err, bind(e), e) from None


def _pairs_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=False), label="expect")
        m = draw(positions(max_value=e.max_position), label="p")
        n = draw(positions(max_value=e.max_position), label="q")
        s = draw(st.integers(-min(m, n), e.max_position - 1 - max(m, n)), label="shift")
        return {"expect": e, "p": m, "q": n, "shift": s}

    return build()


@rope_property("sinusoidal.relative-dot",
               rule=("as rope.relative-position, with unit pairs"),
               cases=_pairs_cases,
               pinned=lambda impl: [{"expect": e, "p": 0, "q": q, "shift": nearest_shift(e, [0, q], 40)}
                                    for e in pinned_expects(impl, partial=False) for q in [min(8, e.max_position - 1)]])
def test_sinusoidal_relative_dot(bind, case):
    e, p, q, s = case["expect"], case["p"], case["q"], case["shift"]
    pos = np.array([p, q, p + s, q + s], dtype=np.int64)
    y, tau = bind(e).pe(pos), _tau(e, pos)
    dots = np.array([y[0] @ y[1], y[2] @ y[3]])
    side = lambda i, j: np.sum((np.abs(y[i]) + tau[i]) * tau[j] + (np.abs(y[j]) + tau[j]) * tau[i] + tau[i] * tau[j])
    bound = side(0, 1) + side(2, 3) + 2 * e.head_dim * 2.0**-53 * (np.abs(y[0] * y[1]).sum() + np.abs(y[2] * y[3]).sum())
    try:
        return assert_close("PE(p + s).PE(q + s)", dots[1:], dots[:1], bound, call=f"PE({p}).PE({q}) = {float(dots[0])!r}, shift {s}",
                            index_names=("dot",))
    except Failure as err:
        raise _named(err, bind(e), e) from None


def _shift_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=False), label="expect")
        k = draw(st.integers(1, max(1, min(64, e.max_position // 2))), label="k")  # p + k inside the domain
        seed = draw(st.integers(0, 2**16), label="seed")
        return {"expect": e, "k": k, "seed": seed}

    return build()


@rope_property("sinusoidal.shift-matrix",
               rule=("(1 + cond) tau sqrt(d) + cond d ulp: the fitted M_k's conditioning cond times the "
                      "per-component bound"),
               cases=_shift_cases, max_examples=10,
               pinned=lambda impl: [{"expect": e, "k": max(1, min(8, e.max_position // 2)), "seed": 0} for e in
                                       pinned_expects(impl, partial=False)])
def test_sinusoidal_shift_matrix(bind, case):
    """Recover M_k by least squares from PE(p) -> PE(p + k) over 4d positions, then check it on 2d others."""
    e, k = case["expect"], case["k"]
    d = e.head_dim
    top = min(e.max_position, 4096) - k
    rng = np.random.default_rng(case["seed"])
    fit = np.sort(rng.choice(top, size=min(top, 4 * d), replace=False)).astype(np.int64)
    test = np.sort(rng.choice(top, size=min(top, 2 * d), replace=False)).astype(np.int64)
    f = bind(e)
    X, Y = f.pe(fit), f.pe(fit + k)
    M, *_ = np.linalg.lstsq(X, Y, rcond=None)
    pred, got = f.pe(test) @ M, f.pe(test + k)
    # first-order error of a least-squares fit: the data error amplified by the condition number of
    # the exact encoding at the fitting positions (a correct implementation's X is that one, up to tau)
    tau = max(float(_tau(e, fit + k).max()), float(_tau(e, test + k).max()))
    cond = float(np.linalg.cond(sinusoidal_fast(e, fit)))
    # plus the least-squares solve's own float64 error: cond * d ulp of the (unit-norm) encoding
    bound = (1 + cond) * tau * np.sqrt(d) + cond * d * 2.0**-53
    try:
        return assert_close("PE(p + k)", pred, got, bound, call=f"M_{k} fitted on {len(fit)} positions, "
                            f"checked on {len(test)} others (condition number {cond:.3g})", dtype=e.dtype)
    except Failure as err:
        raise _named(err, f, e) from None


def _distinct_cases(impl):
    return st.fixed_dictionaries({"expect": expect_strategy(impl, partial=False), "start": st.integers(0, 2**16)})


@rope_property("sinusoidal.distinct",
               rule=("two encodings count as distinct where the exact ones differ by more than twice "
                      "component_bound"),
               cases=_distinct_cases, max_examples=8,
               pinned=lambda impl: [{"expect": e, "start": 0} for e in
                                       pinned_expects(impl, partial=False)])
def test_sinusoidal_distinct(bind, case):
    """PE(p) and PE(p + g) differ wherever the exact encoding separates them by more than the error bound,
    for every gap g up to min(max_position, 2048)."""
    e = case["expect"]
    H = min(e.max_position, 2048)
    p0 = case["start"] % max(1, e.max_position - H)
    pos = np.arange(p0, p0 + H, dtype=np.int64)
    y = bind(e).pe(pos)
    exact = sinusoidal_fast(e, pos)  # about an ulp: plenty for distances compared with 4 tau
    tau = float(_tau(e, pos).max()) * np.sqrt(e.head_dim)
    got = np.linalg.norm(y[1:] - y[0], axis=1)
    want = np.linalg.norm(exact[1:] - exact[0], axis=1)
    resolvable = want > 4 * tau
    collapsed = resolvable & (got <= 2 * tau)
    if collapsed.any():
        g = int(np.flatnonzero(collapsed)[0]) + 1
        raise _named(Failure(f"PE({p0}) and PE({p0 + g}) coincide (distance {got[g - 1]:.3g}), but the encoding "
                             f"separates them by {want[g - 1]:.3g} [gap {g}]", None), bind(e), e)
    return float(np.max(np.where(resolvable, 2 * tau / np.maximum(got, 1e-300), 0.0)))


@rope_property("sinusoidal.length-independent",
               rule=("exact: the same position in calls of different lengths, bit for bit"),
               cases=_cases, pinned=_pinned)
def test_sinusoidal_length_independent(bind, case):
    e, pos = case["expect"], case["positions"]
    f = bind(e)
    alone = f.pe(pos)
    longer = f.pe(np.append(pos, e.max_position - 1))[: len(pos)]
    try:
        return assert_close("PE(p) in a longer sequence", longer, alone, 2 * _tau(e, pos),
                            call=f"positions={pos.tolist()} alone and with {e.max_position - 1} appended", dtype=e.dtype)
    except Failure as err:
        raise err.named("length-leak", "the encoding of a position depends on the other positions of the call") from None


@rope_property("additive.cross-term-leakage",
               rule=("leakage is shown when the scores spread by more than twice what rounding moves one score: "
                      "||W_Q|| ||W_K|| (||dP|| (||x_k|| + ||P||) + (||x_q|| + ||P||) ||dP|| + ||dP||^2), ||dP|| "
                      "<= tau sqrt(d), ||P|| = sqrt(d/2), plus the scores' float64 evaluation (an expected "
                      "failure)"),
               cases=lambda impl: st.fixed_dictionaries(
    {"expect": expect_strategy(impl, partial=False), "seed": st.integers(0, 2**16)}), max_examples=4,
    pinned=lambda impl: [{"expect": e, "seed": 0} for e in
                            pinned_expects(impl, partial=False)])
def test_additive_cross_term_leakage(bind, case):
    """The score (x_m + P_m) W_Q . (x_n + P_n) W_K at gap 2 over starts 3, 10, 100, 4000 (the tutorial's lab).
    Additive encodings are documented to fail: the spread is the evidence."""
    e = case["expect"]
    d = e.head_dim
    starts = np.array([s for s in (3, 10, 100, 4000) if s + 2 < e.max_position], dtype=np.int64)
    rng = np.random.default_rng(case["seed"])
    xq, xk = rng.standard_normal(d), rng.standard_normal(d)
    wq, wk = rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal((d, d)) / np.sqrt(d)
    f = bind(e)
    P, Q = f.pe(starts), f.pe(starts + 2)
    scores = np.array([((xq + P[i]) @ wq) @ ((xk + Q[i]) @ wk) for i in range(len(starts))])
    tau = float(max(_tau(e, starts).max(), _tau(e, starts + 2).max()))
    # Rounding alone moves a score a . b, a = (x_q + P) W_Q, b = (x_k + Q) W_K, by at most
    # ||da|| ||b|| + ||a|| ||db|| + ||da|| ||db||, with ||dP|| <= tau sqrt(d) and ||P|| = sqrt(d/2);
    # the spread of four scores by twice that, plus their own float64 evaluation (2d + 1 ulp of the
    # products of absolute values, bounded with Frobenius norms). A larger spread is the exact scores'.
    dP, nP = tau * np.sqrt(d), np.sqrt(d / 2)
    w2 = np.linalg.norm(wq, 2) * np.linalg.norm(wk, 2)
    per_score = w2 * (dP * (np.linalg.norm(xk) + nP) + (np.linalg.norm(xq) + nP) * dP + dP * dP)
    evaluation = (2 * d + 1) * 2.0**-53 * (np.linalg.norm(xq) + nP + dP) * (np.linalg.norm(xk) + nP + dP) \
        * np.linalg.norm(wq) * np.linalg.norm(wk)
    bound = 2 * (per_score + evaluation)
    spread = float(scores.max() - scores.min())
    if spread > bound:  # a documented non-invariant: the spread is the evidence, and no fault is named
        raise Failure(f"the gap-2 score is {', '.join(f'{s:.4g}' for s in scores)} at starts {starts.tolist()}: "
                      f"spread {spread:.3g}, {spread / bound:.3g} times what rounding allows (seed {case['seed']}, "
                      f"W_Q, W_K standard normal / sqrt(d))", None, spread / bound)
    return spread / bound
