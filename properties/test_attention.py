"""Spec section "attention": one head of attention with RoPE, attend(q, k, v, positions, causal)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.cases import TILE_HEADS, TILE_KV_HEADS, expect_strategy, listed, pinned_expects
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import make_vectors, positions, vectors
from ropespec import reference
from ropespec.reference.encodings import attention
from ropespec.spec import tables, tolerance


HEADS = ((1, 1), (4, 4), (4, 2), (8, 1))  # (n_heads, n_kv_heads): one head, multi-head, grouped-query, multi-query


def heads_of(e, heads: int, n: int) -> st.SearchStrategy[np.ndarray]:
    """n rows of ``heads`` heads of head_dim each (heads contiguous), each head a vector :func:`vectors` draws: a model
    of 40 heads of 128 dims is 40 vectors of 128, not one of 5120 (more dims than an expectation's head holds)."""
    return vectors(e.replace(dtype="float64"), n * heads).map(lambda a: a.reshape(n, heads * e.head_dim))


def made_heads(e, heads: int, n: int, seed: int = 0) -> np.ndarray:
    """The rows :func:`heads_of` draws, made from ``seed`` (:func:`make_vectors`)."""
    return make_vectors(e.replace(dtype="float64"), n * heads, seed=seed).reshape(n, heads * e.head_dim)


def _cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=False), label="expect")
        if impl.expect is None:
            h, kv = draw(st.sampled_from(HEADS), label="heads")
            e = e.replace(head_dim=min(e.head_dim, 16), max_position=min(e.max_position, 8192), n_heads=h, n_kv_heads=kv)
        n = draw(st.integers(2, 6), label="n")
        start = draw(positions(max_value=e.max_position - n), label="start")
        pos = np.arange(start, start + n, dtype=np.int64)
        return {"expect": e, "positions": pos,
                "q": draw(heads_of(e, e.n_heads, n), label="q"),
                "k, v": draw(heads_of(e, e.n_kv_heads, 2 * n), label="k, v"),
                "shift": _on_its_step(e, pos, draw(st.integers(-start, e.max_position - n - start), label="shift")),
                "seed": draw(st.integers(0, 2**16), label="seed")}

    return build()


def _on_its_step(e, pos, shift: int) -> int:
    """The shift nearest ``shift`` that keeps every query on its step of the query temperature (tau(p + c) = tau(p),
    where shift-invariance holds): each row's step [k L - o, (k + 1) L - o) bounds c; ``shift`` itself without one."""
    block = e.params("attention")
    if not block.tempered:
        return shift
    L, o = block.query_temperature_length, block.query_temperature_offset
    k = (pos + o) // L
    lo, hi = int(np.max(k * L - o - pos)), int(np.min((k + 1) * L - o - 1 - pos))
    return min(max(shift, lo), hi)


def _long_pinned(impl):
    """A prefill's call across the tile sizes: 257 rows, TILE_HEADS query heads over TILE_KV_HEADS key/value heads."""
    out = []
    for e in ([impl.expect] if impl.expect is not None else pinned_expects(impl, partial=False)[-1:]):
        if impl.expect is None:
            e = e.replace(head_dim=16, max_position=min(e.max_position, 8192), n_heads=TILE_HEADS,
                          n_kv_heads=TILE_KV_HEADS)
        n = min(257, e.max_position - 1)
        out.append({"expect": e, "positions": np.arange(n, dtype=np.int64), "q": made_heads(e, e.n_heads, n),
                    "k, v": made_heads(e, e.n_kv_heads, 2 * n, seed=1),
                    "shift": _on_its_step(e, np.arange(n), e.max_position - 1 - n), "seed": 0})
    return out


def _split(case):
    n = len(case["positions"])
    return case["q"], case["k, v"][:n], case["k, v"][n:]


def _bound(e, q, k, v, pos):
    return tolerance.attention_bound(e, q, k, v, pos)


@rope_property("attention.shift-invariance",
               rule=("attention_bound: each score's error from the rotated q and k (rotation rtol + angle "
                      "error), through softmax (the output moves by at most 2 max|v| times the score error) and "
                      "the sum"),
               cases=_cases, pinned=_long_pinned)
def test_shift_invariance(bind, case):
    e, pos, c = case["expect"], case["positions"], case["shift"]
    q, k, v = _split(case)
    f = bind(e)
    a, b = f.attend(q, k, v, pos, True), f.attend(q, k, v, pos + c, True)
    bound = _bound(e, q, k, v, pos) + _bound(e, q, k, v, pos + c)
    try:
        return assert_close("attend(..., positions + c)", b, a, bound, call=f"positions {listed(pos)} shifted by {c}",
                            dtype=e.dtype)
    except Failure as err:
        if e.n_heads == e.n_kv_heads == 1 and np.all(np.abs(a - attention(e, q, k, v, pos, True, additive=True)) <= 4 * bound + 1e-9 * np.abs(v).max()):
            raise err.named("absolute-position", "the output is attention with the sinusoidal encoding added to q and "
                                                 "k (its scores carry absolute positions)") from None
        raise err.named("absolute-position", f"the same sequence started {c} positions later gives another output (by "
                                             f"{float(np.max(np.abs(b - a))):.3g}): it depends on where it starts") from None



@rope_property("attention.permutation-equivariance",
               rule=("attention_bound, as attention.shift-invariance"),
               cases=_cases)
def test_permutation_equivariance(bind, case):
    e, pos = case["expect"], case["positions"]
    q, k, v = _split(case)
    perm = np.random.default_rng(case["seed"]).permutation(len(pos))
    f = bind(e)
    out, permuted = f.attend(q, k, v, pos, False), f.attend(q[perm], k[perm], v[perm], pos[perm], False)
    bound = 2 * _bound(e, q, k, v, pos)
    try:
        return assert_close("attend(P q, P k, P v, P positions)", permuted, out[perm], bound,
                            call=f"rows permuted by {perm.tolist()}, no causal mask", dtype=e.dtype)
    except Failure as err:
        by_index = attention(e, q[perm], k[perm], v[perm], np.arange(len(pos)), False)
        if np.all(np.abs(permuted - by_index) <= bound):
            raise err.named("position-offset", f"the output is attention at positions 0..{len(pos) - 1}: "
                                               "the positions it is given are ignored (row indices used)") from None
        raise


@rope_property("attention.values-unrotated",
               rule=("attention_bound with q = 0 (no score error): the mean's own rounding"),
               cases=_cases)
def test_values_unrotated(bind, case):
    """With q = 0 every key scores 0: the output is the plain mean of the (causally visible) values."""
    e, pos = case["expect"], case["positions"]
    q, k, v = _split(case)
    out = bind(e).attend(np.zeros_like(q), k, v, pos, True)
    mean = np.cumsum(v, axis=0) / np.arange(1, len(v) + 1)[:, None]  # per kv head
    d, group = e.head_dim, e.n_heads // e.n_kv_heads
    want = np.concatenate([mean[:, (h // group) * d : (h // group + 1) * d] for h in range(e.n_heads)], axis=1)
    bound = tolerance.attention_bound(e, np.zeros_like(q), k, v, pos)  # no score error: the mean's own rounding
    try:
        return assert_close("attend(0, k, v)", out, want, bound, call=f"q = 0, positions {pos.tolist()}: the running mean of v",
                            dtype=e.dtype)
    except Failure as err:
        heads = [reference.apply(e.replace(dtype="float64"), v[:, j * d : (j + 1) * d], pos) for j in range(e.n_kv_heads)]
        rv = np.cumsum(np.concatenate(heads, axis=1), axis=0) / np.arange(1, len(v) + 1)[:, None]
        rotated = np.concatenate([rv[:, (h // group) * d : (h // group + 1) * d] for h in range(e.n_heads)], axis=1)
        if np.all(np.abs(out - rotated) <= bound):
            raise err.named("values-rotated", "the output is the running mean of R(p) v, so v was rotated with q and "
                                              "k") from None
        raise


@rope_property("attention.causal",
               rule=("attention_bound, as attention.shift-invariance"),
               cases=_cases)
def test_causal(bind, case):
    e, pos = case["expect"], case["positions"]
    q, k, v = _split(case)
    f = bind(e)
    out = f.attend(q, k, v, pos, True)
    k2, v2 = k.copy(), v.copy()
    k2[-1], v2[-1] = k[-1] * 3 + 1, v[-1] * 5 - 2  # change the last row only
    out2 = f.attend(q, k2, v2, pos, True)
    if not np.array_equal(out[:-1], out2[:-1]):
        i = int(np.flatnonzero(np.any(out[:-1] != out2[:-1], axis=1))[0])
        raise Failure(f"row {i} of the output changed when only row {len(pos) - 1} (a later one) changed: "
                      f"the causal mask is not respected", "causal-mask")
    ref = attention(e, q, k, v, pos, True)
    # twice the bound: the implementation's error and the float64 reference's own, each within it
    try:
        return assert_close("attend(q, k, v, causal)", out, ref, 2 * _bound(e, q, k, v, pos),
                            call="against the exact attention", dtype=e.dtype)
    except Failure as err:
        found = _named(e, q, k, v, pos, out, 2 * _bound(e, q, k, v, pos), f.attend)
        if found:
            raise err.named(*found) from None
        raise


def _named(e, q, k, v, pos, out, bound, attend) -> tuple[str, str] | None:
    """(word, evidence) for a causal output that is not the exact attention of e but the exact attention of a nearby
    expectation (:func:`_models`: the layer's RoPE turned on or off, the attention factor or the softmax scale's
    temperature, the queries' temperature by position). A word is evidence that its model fits and that every other
    model does not, on a case that tells them apart: the failing case is drawn small (two keys fix a row's softmax by
    one logit difference per head, where turned-or-not and one scale or another are alike), so ``attend`` (the
    implementation) is called once more where the models that fit and the expectation differ pairwise by more than
    the bound (:func:`_apart`; the failing case itself where it already tells the one model that fits from every other
    and from the expectation), and a model is named only where it alone fits both calls. Where none or several fit
    there, the word is ``unknown``, with both measurements. A query temperature's beta fitted to the output is the
    last resort, where no model fits the failing case."""
    models = _models(e)
    outs = [attention(m[2], q, k, v, pos, True) for m in models]
    fitting = [m for m, o in zip(models, outs) if np.all(np.abs(out - o) <= bound)]
    at = f"positions {listed(pos)}"
    if not fitting:
        beta = _beta_variant(e, q, k, v, pos, out, bound)
        return ("query-temperature", beta) if beta else None
    if len(fitting) == 1:  # the failing case itself may tell the model from every other and from the expectation
        mine = outs[models.index(fitting[0])]
        rest = [o for m, o in zip(models, outs) if m is not fitting[0]] + [attention(e, q, k, v, pos, True)]
        if all(np.any(np.abs(mine - o) > 2 * bound) for o in rest):
            word, what, _ = fitting[0]
            others = [what_ for _, what_, m in models if m is not fitting[0][2]]
            excluded = f" (and not with {'; nor with '.join(others)})" if others else ""
            return word, (f"the output is the exact attention with {what}{excluded}: at {at}, where it and every other "
                          f"model and the expectation differ by more than twice the bound, {word} only")
    if len(fitting) > 1:
        fits = "it fits " + " and ".join(f"{w} ({what})" for w, what, _ in fitting) + " alike"
    else:
        fits = f"it fits {fitting[0][0]} alone"
    apart = _apart(e, fitting + [(None, "the expectation", e)])
    if apart is None:
        return "unknown", (f"at {at} the output fits {' and '.join(f'{w} ({what})' for w, what, _ in fitting)}, and no "
                           f"call inside the domain was found where the models and the expectation differ by more "
                           f"than the bound: nothing measured tells them apart")
    q2, k2, v2, pos2, gap = apart
    out2 = attend(q2, k2, v2, pos2, True)
    bound2 = 2 * tolerance.attention_bound(e, q2, k2, v2, pos2)
    there = [m for m in models if _fits(m[2], q2, k2, v2, pos2, out2, bound2)]
    grown = (f"at positions {listed(pos2)}, where {'they' if len(fitting) > 1 else 'it'} and the expectation differ "
             f"{'pairwise ' if len(fitting) > 1 else ''}by {gap:.3g} or more")
    if len(there) == 1 and there[0] in fitting:
        word, what, _ = there[0]
        others = [what_ for _, what_, m in models if m is not there[0][2]]
        excluded = f" (and not with {'; nor with '.join(others)})" if others else ""
        return word, (f"the output is the exact attention with {what}{excluded}: at {at} {fits}, and {grown} (more "
                      f"than the bound {float(np.max(bound2)):.3g}), {word} only")
    found = ("none of them fits" if not there else
             " and ".join(w for w, _, _ in there) + (" fits" if len(there) == 1 else " fit"))
    return "unknown", (f"at {at} {fits} ({'; '.join(f'{w}: {what}' for w, what, _ in fitting)}); {grown}, "
                       f"{found}")


def _fits(model, q, k, v, pos, out, bound) -> bool:
    return bool(np.all(np.abs(out - attention(model, q, k, v, pos, True)) <= bound))


def _models(e) -> list[tuple[str, str, object]]:
    """The nearby faults of an attention layer, each (word, what it is, the expectation whose exact attention it
    computes): its RoPE turned on or off (nope); DeepSeek's mscale(s, mscale_all_dim)^2 left out of the softmax scale
    where e has it (attention-factor, ropespec.spec.tables.score_temperature); no query temperature, or its steps one
    position early or late, or e's where e has none (query-temperature)."""
    out = []
    block = e.params("attention")
    if block.turns:
        out.append(("nope", "q and k unturned (a NoPE layer's), where the expectation's layer turns them",
                    e.replace(attention_nope=True)))
    else:
        out.append(("nope", "q and k turned by RoPE, where the expectation's layer has no RoPE (NoPE)",
                    e.replace(attention_nope=False)))
    t, g = float(tables.score_temperature(e)), float(tables.attention_factor(e))
    s = e.to_dict()["rope_scaling"] or {}
    keep = {k_: v_ for k_, v_ in s.items() if k_ not in ("mscale", "mscale_all_dim")}
    if t != 1.0:
        out.append(("attention-factor", f"a softmax scale that lacks DeepSeek's mscale(s, mscale_all_dim)^2 = "
                                        f"{t:.6g}", e.replace(rope_scaling=keep | {"attention_factor": g})))
    if g != 1.0 and s:  # the factor cos and sin carry (YaRN's g(s), LongRoPE's, an attention_factor stated) left out
        out.append(("attention-factor", f"scores without the attention factor g^2 t = {g * g * t:.6g} (q and k "
                                        f"unscaled, the softmax scale 1/sqrt(head_dim))",
                    e.replace(rope_scaling=keep | {"attention_factor": 1.0})))
    if block.tempered:
        L, o = block.query_temperature_length, block.query_temperature_offset
        other = 1 - o
        out.append(("query-temperature", "no query temperature at all", e.replace(query_temperature_beta=0.0)))
        out.append(("query-temperature", f"floor(({'p + 1' if other else 'p'}) / {L}) where the expectation has "
                                         f"floor(({'p + 1' if not other else 'p'}) / {L}): its steps one position "
                                         f"{'early' if other else 'late'}", e.replace(query_temperature_offset=other)))
    return out


def _apart(e, models, tries: int = 4):
    """A causal call inside the domain where the exact attentions of ``models`` differ pairwise by more than the
    bound: rows spread from 0 to a reach (1, 2, 4, ... doubling, and the reach itself), the reach growing from 16 to the
    last position (the bound grows with the position: float32's angles at the end of a long domain bound nothing),
    both sides of a query temperature's first step, heads drawn afresh for each try; (q, k, v, positions, the least
    pairwise difference) or None."""
    top = e.max_position - 1
    block = e.params("attention")
    step = {block.steps(e.max_position)[0] - 1, block.steps(e.max_position)[0]} \
        if block.tempered and block.steps(e.max_position) else set()
    reaches = sorted({min(r, top) for r in (16, 256, 4096, top // 2, top)})
    for reach in reaches:
        spread = {0, reach} | {1 << i for i in range(reach.bit_length()) if 1 << i <= reach}
        pos = np.array(sorted(p for p in spread | step if 0 <= p <= top), dtype=np.int64)
        n = len(pos)
        for seed in range(tries):
            q, k, v = (made_heads(e, h, n, seed=3 * seed + i) * (1 + seed)
                       for i, h in enumerate((e.n_heads, e.n_kv_heads, e.n_kv_heads)))
            outs = [attention(m, q, k, v, pos, True) for _, _, m in models]
            bound = 2 * tolerance.attention_bound(e, q, k, v, pos)
            gaps = [float(np.max(np.abs(a - b) - bound)) for i, a in enumerate(outs) for b in outs[i + 1:]]
            if min(gaps) > 0:
                least = min(float(np.max(np.abs(a - b))) for i, a in enumerate(outs) for b in outs[i + 1:])
                return q, k, v, pos, least
    return None


# -- a query temperature by position: Llama 4's NoPE layers, Ministral 3 and Mistral 4 ------------------------------------
def _tempered(impl) -> str | None:
    e = impl.expect
    if e is None:
        return "about an expectation with a query temperature (query_temperature_beta): a factory is drawn none"
    block = e.params("attention")
    if not block.tempered:
        return "the expectation has no query temperature (query_temperature_beta 0)"
    if not block.steps(e.max_position):
        return (f"the query temperature's first step, p = {block.query_temperature_length - block.query_temperature_offset}"
                f", lies beyond max_position {e.max_position}: tau is 1 at every position of the domain")
    return None


def _straddling(e, step: int, before: int, n: int) -> np.ndarray:
    """n consecutive positions with ``before`` of them below ``step`` (a step of tau), inside the domain."""
    start = min(max(0, step - before), e.max_position - n)
    return np.arange(start, start + n, dtype=np.int64)


def _temperature_cases(impl):
    @st.composite
    def build(draw):
        e = impl.expect
        steps = e.params("attention").steps(e.max_position)
        step = draw(st.sampled_from(steps[:1] + steps[-1:] + steps[1:8]), label="step")
        n = draw(st.integers(2, 6), label="n")
        return {"expect": e, "positions": _straddling(e, step, draw(st.integers(1, n - 1), label="before"), n),
                "q": draw(heads_of(e, e.n_heads, n), label="q"),
                "k, v": draw(heads_of(e, e.n_kv_heads, 2 * n), label="k, v")}

    return build()


def _temperature_pinned(impl):
    e = impl.expect
    steps = e.params("attention").steps(e.max_position)
    return [{"expect": e, "positions": _straddling(e, step, 2, 4), "q": made_heads(e, e.n_heads, 4),
             "k, v": made_heads(e, e.n_kv_heads, 8, seed=1)} for step in sorted({steps[0], steps[-1]})]


@rope_property("attention.query-temperature",
               rule=("attention_bound, with the temperature's own rounding (formed in the angle's precision, rounded "
                     "to the query's dtype), against the exact attention"),
               cases=_temperature_cases, pinned=_temperature_pinned, not_about=_tempered)
def test_query_temperature(bind, case):
    """Rows on both sides of a step of tau: the rows before it at one temperature, the rows from it on at the next."""
    e, pos = case["expect"], case["positions"]
    q, k, v = _split(case)
    f = bind(e)
    out = f.attend(q, k, v, pos, True)
    bound = 2 * _bound(e, q, k, v, pos)
    try:
        return assert_close("attend(q, k, v)", out, attention(e, q, k, v, pos, True), bound,
                            call=f"positions {listed(pos)} across a step of the query temperature "
                                 f"({e.params('attention').says()})", dtype=e.dtype)
    except Failure as err:
        found = _named(e, q, k, v, pos, out, bound, f.attend)
        if found:
            raise err.named(*found) from None
        raise


def _beta_variant(e, q, k, v, pos, out, bound) -> str | None:
    """The evidence that the queries carry a temperature of e's form with another beta: the output is the exact
    attention with the beta fitted to it (where no nearer model fits)."""
    block = e.params("attention")
    if block.tempered:
        beta = _fitted_beta(e, q, k, v, pos, out)
        if beta is not None and np.all(np.abs(out - attention(e.replace(query_temperature_beta=beta), q, k, v, pos,
                                                              True)) <= bound):
            return (f"the output is the exact attention with beta {beta:.6g} (fitted), where the expectation's "
                    f"temperature is {block.says()}")
    return None


def _fitted_beta(e, q, k, v, pos, out) -> float | None:
    """The temperature's beta that brings the exact attention closest to ``out`` (golden-section search over
    [0, 4 beta]), or None where the closest lies at an end of it (no beta of this form explains the output)."""
    beta = e.params("attention").query_temperature_beta

    def miss(b: float) -> float:
        return float(np.max(np.abs(out - attention(e.replace(query_temperature_beta=b), q, k, v, pos, True))))

    g = (np.sqrt(5) - 1) / 2
    lo, hi = 0.0, 4 * beta
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = miss(a), miss(b)
    for _ in range(40):  # each step keeps one point and its miss: one attention per step, to 4 beta 0.618^40 ~ 1e-8 beta
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = miss(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = miss(b)
    fit = (lo + hi) / 2
    return None if fit <= 1e-3 * beta or fit >= 3.99 * beta else fit


@rope_property("attention.grouped-query",
               rule=("attention_bound per head"),
               cases=_cases)
def test_grouped_query(bind, case):
    """Against the exact attention, head by head: query head h reads key/value head h // group."""
    e, pos = case["expect"], case["positions"]
    q, k, v = _split(case)
    f = bind(e)
    got = f.attend(q, k, v, pos, True)
    try:
        return assert_close("attend(q, k, v)", got, attention(e, q, k, v, pos, True), 2 * _bound(e, q, k, v, pos),
                            call=f"{e.n_heads} query heads, {e.n_kv_heads} kv heads, positions {pos.tolist()}",
                            dtype=e.dtype, index_names=("row", "column"))
    except Failure as err:
        if e.n_kv_heads not in (1, e.n_heads):
            d, kv = e.head_dim, e.n_kv_heads
            modulo = np.concatenate([attention(e.replace(n_heads=1, n_kv_heads=1), q[:, h * d : (h + 1) * d],
                                               k[:, (h % kv) * d : (h % kv + 1) * d], v[:, (h % kv) * d : (h % kv + 1) * d],
                                               pos, True) for h in range(e.n_heads)], axis=1)
            if np.all(np.abs(got - modulo) <= 2 * _bound(e, q, k, v, pos)):
                raise err.named("convention", f"query head h reads kv head h % {kv}, not h // "
                                              f"{e.n_heads // kv} (transformers' repeat_kv)") from None
        found = _named(e, q, k, v, pos, got, 2 * _bound(e, q, k, v, pos), f.attend)
        if found:
            raise err.named(*found) from None
        raise
