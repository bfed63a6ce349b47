"""Black-box fingerprints of the positional-bias families: what an ALiBi, a T5 bucket function or an xPos computes,
measured by probing it (``ropespec fingerprint TARGET --family alibi|t5-bias|xpos``).

* ALiBi: the slopes of 8 heads (a power of two) and of 12 (none), the slopes' rule and bias max, how closely they
  are the rule's, the bias's form (causal or symmetric, and the row constant softmax ignores: 0 for the distance
  form, m_h i for BLOOM's m_h j, m_h (i - L + 1) for MPT's), and its error at large queries up to that constant.
* T5's buckets: for T5's (32, 128) and LongT5's (64, 256), both directions, where the exact buckets end, the
  log-spaced boundaries, where the last bucket starts, which half each sign takes, and whether it is T5's.
* xPos: each pair's decay per position read off the scores of unit vectors (zeta_i^(1 / scale_base)), the scale
  base it fits, the centres of the query's and the key's exponents, and the rotation's frequencies and base.

Nothing but ``head_dim``, the dtype and how far to probe comes from the expectation; the rest is measured.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ropespec import reference
from ropespec.properties.numerics import alibi_precision_keys, coarse_roundings
from ropespec.reference.biases import alibi_slopes, t5_buckets, xpos_zetas
from ropespec.spec import tolerance
from ropespec.spec.dtypes import unit_roundoff
from ropespec.spec.expectation import Expect

#: the head counts probed: a power of two (its slopes fix the bias max) and one that is not (its rule shows)
ALIBI_HEADS = (8, 12)
#: T5's and LongT5's (num_buckets, max_distance)
T5_PARAMETERS = ((32, 128), (64, 256))


@dataclass
class BiasFingerprint:
    family: str
    #: what was measured, as the lines of the report (the same facts as ``facts``, in words)
    lines: list[str] = field(default_factory=list)
    #: the measured facts, by name, for --json
    facts: dict = field(default_factory=dict)
    #: the expectation fields that reproduce what was measured (None where nothing is recovered)
    expect: dict | None = None

    def to_json(self) -> dict:
        return _finite(asdict(self))


def _finite(v):
    """JSON's numbers: a value that is not finite (a fit with nothing to fit) is null."""
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _slopes_precision(got: np.ndarray, rule: np.ndarray) -> str:
    """How the slopes are the rule's, in words: within a few roundings of float64 or float32 (a computation in
    it), else exactly a coarse dtype's rounding of the rule (both named where their values are the same here), else
    their largest relative error."""
    rel = float(np.max(np.abs(got / rule - 1)))
    for dtype in ("float64", "float32"):
        if rel <= 4 * unit_roundoff(dtype):
            return f"to {rel:.2g} relative, within 4 of {dtype}'s unit roundoffs"
    coarse = coarse_roundings(got, rule)
    if coarse:
        return "the rule's rounded to " + " or ".join(coarse) + (" (the same values here)" if len(coarse) > 1 else "")
    return f"to {rel:.2g} relative (no dtype's rounding of the rule)"


# -- ALiBi ----------------------------------------------------------------------------------------------------------
def fingerprint_alibi(f, expect: Expect) -> BiasFingerprint:
    """``f``: an AlibiBound (ropespec.implementations.families.alibi)."""
    fp = BiasFingerprint("alibi")
    kind = f.kind()
    m8, m12 = (np.asarray(f.slopes(h), dtype=np.float64) for h in ALIBI_HEADS)
    fp.facts["slopes"] = {str(h): m.tolist() for h, m in zip(ALIBI_HEADS, (m8, m12))}
    rising = bool(np.all(np.isfinite(m8)) and np.all(m8 < 0) and np.all(m12 < 0))
    if rising:  # the slopes of a bias that grows with the distance: the rest is read about their magnitudes
        m8, m12 = -m8, -m12
        fp.facts["sign"] = "rising"
        fp.lines.append("sign: the bias grows with the distance, +m_h (i - j) (the slopes read off it are negative); "
                        "what follows is about -slopes")
    if not np.all(np.isfinite(m8)) or np.any(m8 <= 0):
        fp.lines.append(f"slopes of 8 heads: {', '.join(f'{v:.6g}' for v in m8)}: not all of one sign, no rule of "
                        f"ALiBi's fits")
        return fp
    bias_max = -8 * math.log2(m8[0])
    nice = round(bias_max)
    bias_max = float(nice) if abs(bias_max - nice) < 1e-4 else bias_max
    ratios = m8[1:] / m8[:-1]
    spread = float(np.max(np.abs(ratios / ratios[0] - 1)))
    fp.facts.update(bias_max=bias_max, geometric_spread=spread)
    fp.lines.append(f"slopes of 8 heads: {m8[0]:.9g}, {m8[1]:.9g}, ..., {m8[-1]:.9g}: "
                    + ("geometric" if spread < 1e-3 else f"not geometric (ratios differ by {spread:.2g})")
                    + f", head 0's 2^(-{bias_max:.6g} / 8): bias max {bias_max:.6g}")
    rules = {"Press et al.'s (the slopes of 8 heads, then every other of 16's)": alibi_slopes(12, bias_max),
             "geometric over all 12 heads (the rule of a power of two)": 2.0 ** (-bias_max * (np.arange(12) + 1) / 12),
             "Press et al.'s, in reverse order": alibi_slopes(12, bias_max)[::-1]}
    errors = {name: float(np.max(np.abs(m12 / ref - 1))) for name, ref in rules.items()}
    best = min(errors, key=errors.get)
    fp.facts.update(rule=best if errors[best] < 1e-2 else "other", rule_error=errors[best])
    if errors[best] < 1e-2:
        fp.lines.append(f"slopes of 12 heads: {best}, {_slopes_precision(m12, rules[best])}")
    else:
        fp.lines.append(f"slopes of 12 heads: no rule fits (the nearest, {best}, is {errors[best]:.2g} off): "
                        f"{np.array2string(m12, precision=6)}")
    if rising:
        return fp
    if kind == "slopes":
        fp.lines.append("computes the slopes alone (slopes(n_heads)): no bias to probe")
        fp.expect = {"alibi_bias_max": bias_max}
        return fp
    symmetric = _alibi_form(f, fp, m8)
    _alibi_precision(f, fp, expect, m8, symmetric)
    fp.expect = {"alibi_bias_max": bias_max, "bias_symmetric": symmetric}
    return fp


def _alibi_form(f, fp: BiasFingerprint, m: np.ndarray) -> bool:
    """The bias's form over keys on both sides of the query, and its row constant; whether it is symmetric."""
    keys = np.arange(0, 129)
    rows = {}
    for i in (64, 96):
        b = np.asarray(f.bias(8, np.array([i]), keys), dtype=np.float64)[:, 0, :]
        rows[i] = b
    b = rows[64]
    before, after = np.diff(b[:, :65], axis=1), np.diff(b[:, 64:], axis=1)
    slope_before = np.median(before, axis=1)
    slope_after = np.median(after, axis=1)
    if np.allclose(slope_after, slope_before, rtol=1e-2, atol=0):
        form, symmetric = "causal -m_h (i - j): the line goes on past the query (keys after it are the mask's)", False
    elif np.allclose(slope_after, -slope_before, rtol=1e-2, atol=0):
        form, symmetric = "symmetric -m_h |i - j|: the bias falls on both sides of the query", True
    else:
        form, symmetric = (f"causal before the query; keys after it get {np.array2string(b[0, 65:68], precision=4)}, "
                           f"..., not a continuation or a mirror"), False
    fp.facts["form"] = "symmetric" if symmetric else "causal"
    fp.lines.append(f"form: {form}")
    # the row constant: the bias at the query's own key, in units of the slope (0, i, or i - L + 1 with L - 1 = 128)
    units = {i: float(np.median(rows[i][:, i] / m)) for i in rows}
    fp.facts["row_constant"] = {str(i): u for i, u in units.items()}
    if all(abs(u) < 1e-3 for u in units.values()):
        said = "0: the distance form"
    elif all(abs(u - i) < 1e-3 * i for i, u in units.items()):
        said = "m_h i: formed from the positions from the sequence's start (BLOOM's m_h j)"
    elif all(abs(u - (i - 128)) < 1e-3 * 128 for i, u in units.items()):
        said = "m_h (i - L + 1), L - 1 the call's last position: formed from its end (MPT's m_h (j - L + 1))"
    else:
        said = ", ".join(f"{u:.6g} m_h at query {i}" for i, u in units.items())
    fp.lines.append(f"row constant (softmax ignores it): {said}")
    return symmetric


def _alibi_precision(f, fp: BiasFingerprint, expect: Expect, m: np.ndarray, symmetric: bool) -> None:
    """The worst error up to a row constant (half the spread of bias - reference over the row's keys) at queries
    2^k - 1, each of 8 heads, and the strict bound there (u of the output dtype times |m (i - j)|)."""
    errors, worst_strict = {}, 0.0
    for k in range(4, 64, 4):
        p = (1 << k) - 1
        if p >= expect.max_position:
            break
        keys = np.array(alibi_precision_keys(p))
        got = np.asarray(f.bias(8, np.array([p]), keys), dtype=np.float64)[:, 0, :]
        ref = -alibi_slopes(8, fp.facts["bias_max"])[:, None] * (np.abs(p - keys) if symmetric else (p - keys))[None]
        d = got - ref
        err = float(np.max((d.max(axis=1) - d.min(axis=1)) / 2))
        errors[str(p)] = err
        strict = float(np.max(tolerance.bias_bound(expect.replace(angle_dtype="exact"), alibi_slopes(8, fp.facts["bias_max"]),
                                                   np.array([p]), keys)))
        worst_strict = max(worst_strict, err / strict if strict else (math.inf if err else 0.0))
    fp.facts["max_errors"] = errors
    if errors:
        fp.lines.append("error up to a row constant: " + ", ".join(f"p={p}: {v:.2g}" for p, v in errors.items())
                        + f" ({'within' if worst_strict <= 1 else f'{worst_strict:.3g} times'} the strict "
                          f"{expect.dtype} bound at worst)")


# -- T5's buckets ---------------------------------------------------------------------------------------------------
def fingerprint_t5(f, expect: Expect) -> BiasFingerprint:
    """``f``: a T5Bound (ropespec.implementations.families.t5_bias)."""
    fp = BiasFingerprint("t5-bias")
    all_t5 = True
    for nb, md in T5_PARAMETERS:
        for bidirectional in (True, False):
            d = np.arange(-(2 * md + 8), 2 * md + 9)
            got = np.asarray(f.buckets(d, bidirectional, nb, md), dtype=np.int64)
            ref, alt = t5_buckets(d, bidirectional, nb, md, tolerance.t5_log_slack)
            wrong = ~((got == ref) | (got == alt))
            all_t5 &= not wrong.any()
            name = f"{nb}_{md}_{'bidirectional' if bidirectional else 'causal'}"
            fp.facts[name] = facts = _t5_side_facts(d, got)
            facts["t5"] = not wrong.any()
            where = ", T5's buckets" if not wrong.any() else (f"; differs from T5's at {int(wrong.sum())} distances, first "
                                                f"{int(d[wrong][0])} ({int(got[wrong][0])}, T5's {int(ref[wrong][0])})")
            fp.lines.append(f"{nb} buckets, max_distance {md}, {'bidirectional' if bidirectional else 'causal'}: "
                            f"distance 0 in bucket {facts['query']}{where}")
            fp.lines += [f"  {line}" for line in facts["said"]]
    fp.facts["t5"] = all_t5
    fp.lines.append("matches T5's _relative_position_bucket at every distance probed" if all_t5 else
                    "is not T5's bucket function (see the distances above)")
    return fp


def _t5_side_facts(d: np.ndarray, got: np.ndarray) -> dict:
    """For each side (keys after the query, d > 0, and before it, d < 0): the buckets it uses, the distances below
    which each distance has a bucket of its own, the boundaries after that, and where the last bucket starts."""
    out: dict = {}
    words = []
    for side, sign in (("after", 1), ("before", -1)):
        dist = np.arange(1, int(np.max(np.abs(d))) + 1)
        b = got[np.searchsorted(d, sign * dist)]
        run = 1  # distances 1..run each have a bucket of their own, one after another
        while run < len(b) and b[run] == b[0] + run:
            run += 1
        last = int(b[-1])
        steps = [int(dist[i]) for i in range(run, len(dist)) if b[i] != b[i - 1] and b[i] != last]
        saturated_from = int(dist[int(np.argmax(b == last))])
        out[side] = {"buckets": [int(b.min()), int(b.max())], "one_each_to": int(dist[run - 1]),
                     "boundaries": steps, "last_from": saturated_from}
        if b.min() == b.max():
            words.append(f"keys {side} the query: all in bucket {int(b.min())}")
        else:
            words.append(f"keys {side} the query: buckets {int(b.min())}..{int(b.max())}, one per distance to "
                         f"{int(dist[run - 1])}, new ones at {', '.join(map(str, steps[:8]))}"
                         f"{', ...' if len(steps) > 8 else ''}, the last from {saturated_from}")
    out["query"] = int(got[np.searchsorted(d, 0)])
    out["said"] = words
    return out


# -- xPos -----------------------------------------------------------------------------------------------------------
def fingerprint_xpos(f, expect: Expect) -> BiasFingerprint:
    """``f``: an XposBound (ropespec.implementations.families.xpos). Each pair's unit vectors (under the expectation's
    convention) go in as query and key; the two scores of each pair give its scale product and its angle."""
    fp = BiasFingerprint("xpos")
    e = expect
    pairs, out_pairs = e.pairs(), e.out_pairs()
    n = len(pairs)
    eye = np.eye(e.head_dim)
    first = eye[[a for a, _ in pairs]].sum(axis=0)[None]  # one row: every pair's (1, 0)
    second = eye[[b for _, b in pairs]].sum(axis=0)[None]  # every pair's (0, 1)

    def per_pair(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.array([u[0, [oa, ob]] @ v[0, [oa, ob]] for oa, ob in out_pairs])

    def scores(m: int, nn: int):
        """(scale product, angle, |q'|, |k'|), each (n,) per pair, between one query row at m and one key row at nn
        (a query and a key of one row each: real code holds one row per position, keys at or before the query)."""
        qo, ko = (np.asarray(v, dtype=np.float64) for v in f.xpos(first, first, np.array([m]), np.array([nn])))
        _, ko2 = (np.asarray(v, dtype=np.float64) for v in f.xpos(first, second, np.array([m]), np.array([nn])))
        s1, s2 = per_pair(qo, ko), per_pair(qo, ko2)
        return np.hypot(s1, s2), np.arctan2(s2, s1), np.sqrt(per_pair(qo, qo)), np.sqrt(per_pair(ko, ko))

    top = min(e.max_position - 1, 1024)  # zeta_0^(1024 / 512) is 0.08: a decay well above any dtype's rounding
    far, _, q_far, _ = scores(top, 0)
    same, _, q_same, k_far = scores(top, top)
    zeta = xpos_zetas(e)
    lz = np.log(zeta)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_position = np.log(far) / top  # ln zeta_i / scale_base, if the decay is xPos's
        # 1 / S by least squares over the pairs (the strongly decaying ones weigh most); the fit's worst residual in
        # the log of the products is their relative misfit
        inv = float(np.sum(lz * per_position) / np.sum(lz * lz))
        base = 1 / inv if inv else math.nan
        spread = float(np.max(np.abs(np.log(far) - lz * top * inv)))
        base_within = abs(base) * spread / abs(lz[0] * top * inv)  # the misfit, as a change of S at pair 0
    # how far a norm can be off in the dtype (xpos_score_bound's per-component rate), so a centre: rel / |ln zeta / S|
    rel = float(tolerance.rotation_rtol(e) + unit_roundoff(e.angle_dtype if e.angle_dtype != "exact" else "float64")
                * (2 + 2 * abs(per_position[0]) * top))
    fp.facts.update(scale_base=base, scale_base_uncertainty=base_within, product_misfit=spread, decay_per_position=per_position.tolist())
    cancel = float(np.max(np.abs(same - 1)))
    fp.facts["equal_positions_error"] = cancel
    # each of the two scores within xPos's bound at (top, top): their hypot within sqrt 2 times it
    allowed = np.sqrt(2) * tolerance.xpos_score_bound(e, top, reference.thetas(e.replace(rope_scaling=None)),
                                                      xpos_zetas(e), q_same, k_far[None])[0]
    cancels = bool(np.all(np.abs(same - 1) <= allowed))
    if np.all(np.abs(per_position) < 1e-12):
        fp.lines.append(f"no decay: every pair's score between positions {top} and 0 is its RoPE score (plain RoPE)")
    elif not cancels:
        fp.lines.append(f"decay: not a function of m - n alone: at equal positions ({top}, {top}) the scales do not "
                        f"cancel (pair 0's product is {same[0]:.6g}, not 1): queries and keys are not scaled "
                        f"inversely, or about different centres; from key 0 to a query at {top} the product "
                        f"{far[0]:.6g} is what S = {base:.6g} would give")
    elif base < 0:
        fp.lines.append(f"decay reversed: the score of pair 0 grows by {far[0]:.6g} from key 0 to a query at {top} "
                        f"(xPos's falls: zeta_i^(({top} - 0) / S) < 1); the scale base it fits is {base:.6g}")
    else:
        fp.lines.append(f"decay: each pair's score is zeta_i^((m - n) / S) times RoPE's, S = {base:.6g} ± {base_within:.2g} "
                        f"(the pairs' products fit it to {spread:.2g} relative; zeta_i = (2i / r + 0.4) / 1.4, r = {e.rotary_dim}); at "
                        f"equal positions the scales cancel" + (f" to {cancel:.2g}" if cancel else ""))
    with np.errstate(divide="ignore", invalid="ignore"):
        q_centre = top - np.log(q_far) / per_position  # |q'| = zeta^((m - c) / S)
        k_centre = top + np.log(k_far) / per_position  # |k'| = zeta^(-(n - c') / S)
    if np.isfinite(base) and base > 0:  # read off pair 0, the fastest decay: each centre to 2 rel / |ln zeta_0 / S|
        qc, kc, within = float(q_centre[0]), float(k_centre[0]), 2 * rel / abs(per_position[0])
        fp.facts.update(query_centre=qc, key_centre=kc, centre_uncertainty=within)
        fp.lines.append(f"exponents' centres: the query's at {_near(qc)}, the key's at {_near(kc)} (each to "
                        f"{within:.2g})" + (": one centre, which cancels in every score" if abs(qc - kc) <= 2 * within
                                           else ": apart, so the scores depend on where each is centred"))
    # the rotation: the angle of each pair's score per position, unwrapped by doubling
    theta = _xpos_frequencies(scores, e)
    if theta is not None:
        lt = np.log(theta)
        slope = np.polyfit(np.arange(n), lt, 1)[0] if n > 1 else 0.0
        rope_base = math.exp(-slope * e.rotary_dim / 2)
        fp.facts.update(thetas=theta.tolist(), rope_theta=rope_base)
        fp.lines.append(f"rotation: theta_0 = {theta[0]:.9g}, ..., theta_{n - 1} = {theta[-1]:.9g}: base "
                        f"{rope_base:.6g}")
    if np.isfinite(base) and base > 0 and cancels and base_within < 0.5:
        fp.expect = {"xpos_scale_base": float(round(base)) if abs(base - round(base)) < 1e-3 * base else base}
    return fp


def _near(v: float) -> str:
    """A measured position to 4 digits, 0 where it is within a thousandth of it."""
    return "0" if abs(v) < 1e-3 else f"{v:.4g}"


def _xpos_frequencies(scores, e: Expect) -> np.ndarray | None:
    """Each pair's frequency from the angle of its score between a query at 2^k and a key at 0, the angle at 1 then
    followed as the position doubles (each doubling's turn is taken nearest to twice the last)."""
    _, angle, _, _ = scores(1, 0)
    theta = np.abs(angle)
    p = 1
    while 2 * p < min(e.max_position, 1 << 12):
        p *= 2
        _, a, _, _ = scores(p, 0)
        guess = theta * p
        turns = np.round((guess - np.abs(a)) / (2 * np.pi))
        cand1 = np.abs(a) + 2 * np.pi * turns
        cand2 = -np.abs(a) + 2 * np.pi * np.round((guess + np.abs(a)) / (2 * np.pi))
        pick = np.where(np.abs(cand1 - guess) <= np.abs(cand2 - guess), cand1, cand2)
        theta = pick / p
    return theta if np.all(np.isfinite(theta)) else None


