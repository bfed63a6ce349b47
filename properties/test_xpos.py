"""Spec section "xpos": RoPE with a per-pair decay, xpos(q, k, q_positions, k_positions) -> (q', k'), checked on the
scores each rotated pair contributes (a centre common to the queries' and keys' exponents cancels there) against
ropespec.reference.biases.xpos_pair_scores: one query row per call and keys at or before it, as a decoder attends."""

from __future__ import annotations

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.contract import Failure
from ropespec.properties.cases import listed, nearest_shift, shift_range
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import make_vectors
from ropespec.reference.biases import xpos_pair_scores, xpos_zetas
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect

#: where the drawn query sits: below 4096 (the decay is zeta^(p / 512): past a few thousand it underflows float32)
NEAR_POSITIONS = 4096


def _expects(impl) -> list[Expect]:
    if impl.expect is not None:
        return [impl.expect]
    base = Expect(dtype=impl.dtype, max_position=impl.max_position, **impl.promise)
    return [base.replace(head_dim=8), base.replace(head_dim=32, convention="interleaved")]


def _expect_strategy(impl):
    if impl.expect is not None:
        return st.just(impl.expect)
    return st.builds(lambda d, conv, e: e.replace(head_dim=d, convention=conv), st.sampled_from((2, 4, 8, 16, 32, 64)),
                     st.sampled_from(("half", "interleaved")), st.sampled_from(_expects(impl)))


def _pairs(e: Expect):
    return tuple(np.array(ix) for ix in zip(*e.out_pairs()))


def _scores(e: Expect, qo: np.ndarray, ko: np.ndarray):
    """Each rotated pair's score between the query row and every key row: (n_k, n_pairs), and the pairs' norms."""
    a, b = _pairs(e)
    s = qo[0, a][None] * ko[:, a] + qo[0, b][None] * ko[:, b]
    return s, np.hypot(qo[0, a], qo[0, b]), np.hypot(ko[:, a], ko[:, b])


def _call(bind, e, q, k, m, ks):
    qo, ko = bind(e).xpos(q, k, np.array([m]), np.asarray(ks))
    return _scores(e, qo, ko)


def _bound(e, largest, qn, kn):
    th = reference.thetas(e.replace(rope_scaling=None))
    return tolerance.xpos_score_bound(e, largest, th, xpos_zetas(e), qn, kn)


def _cases(impl, shift: bool = False):
    @st.composite
    def build(draw):
        e = draw(_expect_strategy(impl), label="expect")
        top = min(e.max_position, NEAR_POSITIONS) - 1
        m = draw(st.integers(0, top), label="m")
        ks = sorted(set(draw(st.lists(st.integers(0, m), min_size=1, max_size=6), label="k_positions")) | {m})
        case = {"expect": e, "m": m, "k_positions": ks, "q": make_vectors(e, 1, seed=m),
                "k": make_vectors(e, len(ks), seed=m + 1)}
        if shift:
            lo, hi = shift_range(e, [m, *ks], NEAR_POSITIONS)
            if lo == hi == 0:
                reject()  # the query and its keys span the whole domain: no shift keeps them inside it
            case["shift"] = draw(st.integers(lo, hi).filter(bool), label="shift")
        return case

    return build()


def _pinned(impl, shift: bool = False):
    out = []
    for e in _expects(impl):
        top = min(e.max_position, NEAR_POSITIONS) - 1
        for m, ks in ((0, [0]), (5, [0, 1, 4, 5]), (1000, [0, 999, 1000]), (256, list(range(257)))):
            if m > top:  # (the last: one query over 257 keys, across the tile sizes of keys)
                continue
            case = {"expect": e, "m": m, "k_positions": ks, "q": make_vectors(e, 1, seed=m),
                    "k": make_vectors(e, len(ks), seed=m + 1)}
            if shift:
                case["shift"] = nearest_shift(e, [m, *ks], 2000, NEAR_POSITIONS)
                if case["shift"] is None:
                    continue
            out.append(case)
    return out


def _fitted_exponents(s, rot, zetas):
    """For each (key, pair), the exponent x with s = zeta_i^x rot (where both are clearly non-zero), else NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log(s / rot) / np.log(zetas)[None]
    return np.where((np.abs(rot) > 1e-3) & (s / rot > 0) & (np.abs(np.log(zetas))[None] > 1e-6), x, np.nan)


def _explain(e, s, m, ks, q, k) -> tuple[str, str] | None:
    """The fault a failing score fits, from its per-pair exponents: the decay the other way, another scale base, or
    scales that do not cancel at equal positions."""
    ref = xpos_pair_scores(e, q[0], k, m, ks)
    big = np.abs(ref) > 1e-3 * np.max(np.abs(ref), initial=0)
    if big.any():
        g = s[big] / ref[big]
        if np.ptp(g) <= 0.5 * abs(float(np.median(g)) - 1):  # one factor, clear of the ratios' own rounding
            return "attention-factor", (f"every score is {float(np.median(g)):.17g} times the expected: the output "
                                        f"is scaled by another factor")
    zetas = xpos_zetas(e)
    rot = xpos_pair_scores(e.replace(xpos_scale_base=1e300), q[0], k, m, ks)  # RoPE's rotated dots alone
    x = _fitted_exponents(s, rot, zetas)
    rows = ~np.isnan(x).all(axis=1)
    if not rows.any():
        return None
    per_key = np.nanmedian(x[rows], axis=1)  # one exponent per key when the decay is zeta^x at all
    delta = (m - np.asarray(ks))[rows].astype(np.float64)
    if np.allclose(per_key, -delta / e.params("xpos").xpos_scale_base, rtol=1e-3, atol=1e-6) and delta.any():
        return "xpos-decay", "the decay runs the other way: zeta^((n - m) / scale_base)"
    if delta.any() and np.all(np.abs(delta) > 0) and np.ptp(per_key / np.where(delta == 0, 1, delta)) < 1e-6:
        base = float(np.median(delta / per_key))
        return "xpos-decay", f"the decay is zeta^((m - n) / {base:.6g}), not scale_base {e.params('xpos').xpos_scale_base:g}"
    if np.any(np.abs(per_key[delta == 0]) > 1e-6) if (delta == 0).any() else False:
        x0 = float(per_key[delta == 0][0])
        return "xpos-scale", (f"at equal positions the scores still carry zeta^{x0:.6g} = zeta^({x0 * e.params('xpos').xpos_scale_base:.4g} "
                              f"/ scale_base): the query's and key's scales do not cancel (the keys scaled like the "
                              f"queries, or the two exponents centred {x0 * e.params('xpos').xpos_scale_base:.4g} positions apart)")
    return None


def _worst(err: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, int, int]:
    """err / bound (a non-finite error counts as infinitely over), and the (key, pair) where it is largest."""
    ratio = np.where(np.isfinite(err), err / bound, np.inf)
    r, i = (int(v) for v in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    return ratio, r, i


def _fail(what: str, s, ref, bound, e, m, ks, q, k, default: str | None = None) -> Failure:
    err = np.abs(s - ref)
    ratio, r, i = _worst(err, bound)
    msg = (f"{what}[key {ks[r]}, pair {i}] = {s[r, i]:.9g}, expected {ref[r, i]:.9g} (|error| {err[r, i]:.3g} > bound "
           f"{bound[r, i]:.3g}); {int((ratio > 1).sum())} of {ratio.size} scores [xpos(q, k, q_positions=[{m}], "
           f"k_positions={listed(ks)}), scale_base {e.params('xpos').xpos_scale_base:g}]")
    found = _explain(e, s, m, ks, q, k)
    if found is None:
        return Failure(msg, default or "unknown", float(ratio[r, i]))
    return Failure(msg, found[0], float(ratio[r, i]), evidence=found[1])


@rope_property("xpos.conformance",
               rule="xpos_score_bound per pair's score, from the output pairs' norms and the call's largest position",
               cases=_cases, pinned=_pinned)
def test_xpos_conformance(bind, case):
    e, m, ks, q, k = case["expect"], case["m"], case["k_positions"], case["q"], case["k"]
    s, qn, kn = _call(bind, e, q, k, m, ks)
    ref = xpos_pair_scores(e, q[0], k, m, ks)
    bound = _bound(e, m, qn, kn)
    if np.all(np.abs(s - ref) <= bound):
        return float(np.max(np.abs(s - ref) / bound))
    raise _fail("score", s, ref, bound, e, m, ks, q, k)


@rope_property("xpos.relative-position",
               rule="xpos_score_bound at both places summed",
               cases=lambda impl: _cases(impl, shift=True), pinned=lambda impl: _pinned(impl, shift=True))
def test_xpos_relative_position(bind, case):
    e, m, ks, q, k, c = case["expect"], case["m"], case["k_positions"], case["q"], case["k"], case["shift"]
    near, qn, kn = _call(bind, e, q, k, m, ks)
    far, qf, kf = _call(bind, e, q, k, m + c, [p + c for p in ks])
    bound = _bound(e, m, qn, kn) + _bound(e, m + c, qf, kf)
    if np.all(np.abs(far - near) <= bound):
        return float(np.max(np.abs(far - near) / bound))
    err = np.abs(far - near)
    ratio, r, i = _worst(err, bound)
    message = (f"score at (m + {c}, n + {c}) [key {ks[r]} + {c}, pair {i}] = {far[r, i]:.9g}, at (m, n) "
               f"{near[r, i]:.9g} (|difference| {err[r, i]:.3g} > bound {bound[r, i]:.3g}) [xpos(q, k, "
               f"q_positions=[{m}], k_positions={list(ks)}), shifted by {c}]")
    cause = _unequal_scales(bind, e, q, k, m + c)
    if cause is not None:  # the evidence of inverse-scale: the scales do not cancel where they must
        raise Failure(message, "xpos-scale", float(ratio[r, i]), evidence=cause)
    raise Failure(message, "absolute-position", float(ratio[r, i]),
                  evidence="the scores depend on where the query and key are, not only on m - n")


def _unequal_scales(bind, e, q, k, m) -> str | None:
    """Why the scores move with position, where the query's and key's scales do not cancel at equal positions: the
    exponent left at (m, m), in words (else None)."""
    s, qn, kn = _call(bind, e, q, k[-1:], m, [m])
    ia, ib = (np.array(ix) for ix in zip(*e.pairs()))
    plain = (q[0, ia] * k[-1, ia] + q[0, ib] * k[-1, ib])[None]
    if np.all(np.abs(s - plain) <= _bound(e, m, qn, kn)):
        return None
    found = _explain(e, s, m, [m], q, k[-1:])
    return found[1] if found is not None and found[0] == "xpos-scale" else "the scores at equal positions are not RoPE's"


@rope_property("xpos.inverse-scale",
               rule="xpos_score_bound per pair's score at equal positions",
               cases=_cases, pinned=_pinned)
def test_xpos_inverse_scale(bind, case):
    e, m, q = case["expect"], case["m"], case["q"]
    k = case["k"][-1:]
    s, qn, kn = _call(bind, e, q, k, m, [m])
    ia, ib = (np.array(ix) for ix in zip(*e.pairs()))
    plain = (q[0, ia] * k[0, ia] + q[0, ib] * k[0, ib])[None]
    bound = _bound(e, m, qn, kn)
    if np.all(np.abs(s - plain) <= bound):
        return float(np.max(np.abs(s - plain) / bound))
    raise _fail("score at equal positions", s, plain, bound, e, m, [m], q, k, "xpos-scale")
