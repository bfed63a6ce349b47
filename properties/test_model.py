"""Spec section "model": a whole model's positional plumbing (shared/design/PLUMBING.md), through its forward
``forward(ids, positions, mask, cache) -> (logits, cache)`` and the positions it hands its RoPE.

A plain RoPE model's logits do not move when a row's positions move by a constant (shift invariance), so a row turned
at positions offset by its padding gives the logits of the right ones: the positions the model hands its RoPE are
compared with the canonical ones as integers (each real token at the number of real tokens before it), and the logits
are compared where positions cannot show what is wrong (a mask, a cache). Tokens are drawn below MIN_VOCAB; rows of 1
to 6 real tokens, left-padded to one length."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure, Fault, Unsupported
from ropespec.properties.framework import NotChecked, rope_property
from ropespec.properties.model_batch import (MIN_VOCAB, canonical, check_positions, expect_of, left_padded,
                                             real_mask, reference_forward, said, same_logits)
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect
from ropespec.spec.scaling import original_length

#: the longest row drawn, and the most decoding steps
MAX_ROW, MAX_STEPS = 6, 3


def _cases(impl):
    e = expect_of(impl)

    @st.composite
    def build(draw):
        n_rows = draw(st.integers(1, 3), label="rows")
        rows = [draw(st.lists(st.integers(0, MIN_VOCAB - 1), min_size=1, max_size=MAX_ROW), label="row")
                for _ in range(n_rows)]
        steps = [draw(st.lists(st.integers(0, MIN_VOCAB - 1), min_size=n_rows, max_size=n_rows), label="step")
                 for _ in range(draw(st.integers(0, MAX_STEPS), label="steps"))]
        chunk = draw(st.integers(1, MAX_ROW), label="chunk")
        return {"expect": e, "rows": rows, "steps": steps, "chunk": chunk}

    return build()


def _pinned(impl):
    """Two rows of unequal length (the shorter padded by 3), two decoding steps, chunks of 2."""
    return [{"expect": expect_of(impl), "rows": [[3, 1, 4, 1, 5], [9, 2]], "steps": [[6, 5], [3, 5]], "chunk": 2}]


#: what a model that returns no cache is checked without (model.cache and model.length need one throughout)
NO_CACHE = "the model returned no cache from its forward"


def _needs_cache(cache, what: str) -> None:
    if cache is None:
        raise Unsupported(f"{NO_CACHE}: {what} needs one")


def _schedule(model, ids, mask, steps):
    """A prefill of ``ids`` and then each decoding step, where the model keeps a cache, one forward at a time (a
    property checks each before the next runs): (logits, positions handed its RoPE, the mask of the sequence so far,
    whether the model returned a cache)."""
    logits, seen, cache = model.forward(ids, mask=mask)
    yield logits, seen, mask, cache is not None
    full_mask = mask
    for step in steps if cache is not None else []:
        full_mask = np.concatenate([full_mask, np.ones((len(ids), 1), dtype=np.int64)], axis=1)
        logits, seen, cache = model.forward(np.array(step)[:, None], mask=full_mask, cache=cache)
        yield logits, seen, full_mask, cache is not None


# -- model.positions -----------------------------------------------------------------------------------------------
@rope_property("model.positions", rule="exact: integers", cases=_cases, pinned=_pinned)
def test_model_positions(bind, case):
    """The positions handed the RoPE, inferred from the mask: in a padded prefill, in the same prefill cut into chunks
    with a cache, at every decoding step after it, and at every forward of the model's own generate."""
    e = case["expect"]
    ids, mask, pads = left_padded(case["rows"])
    forwards = _schedule(bind.fresh(e), ids, mask, case["steps"])
    _, seen_first, _, kept = next(forwards)
    check_positions(e, seen_first, canonical(e, mask), mask, "the padded prefill", pads)
    generate_steps = max(2, len(case["steps"]) + 1)
    if not kept:
        note = _generated_positions(bind, e, ids, mask, pads, generate_steps, len(seen_first))
        return 0.0, "; ".join(filter(None, (f"the prefill only: {NO_CACHE}", note)))
    want_all = canonical(e, mask)
    for s, (_, seen, full_mask, _) in enumerate(forwards):
        want = canonical(e, full_mask)[:, -1:]
        check_positions(e, seen, want, full_mask[:, -1:], f"decoding step {s + 1}", pads, past=full_mask.shape[1] - 1)
    chunked = bind.fresh(e)
    cache, n, c = None, ids.shape[1], case["chunk"]
    for k, start in enumerate(range(0, n, c)):
        end = min(n, start + c)
        _, seen, cache = chunked.forward(ids[:, start:end], mask=mask[:, :end], cache=cache)
        check_positions(e, seen, want_all[:, start:end], mask[:, start:end], f"chunk {k + 1} (tokens {start} to "
                         f"{end - 1}) of a prefill in chunks of {c}", pads if start == 0 else None, past=start)
    note = _generated_positions(bind, e, ids, mask, pads, generate_steps, len(seen_first))
    return (0.0, note) if note else 0.0


def _generated_positions(bind, e, ids, mask, pads, steps: int, per_forward: int) -> str | None:
    """The positions the model's own generate (a transformers model's, a decoder's generate(ids, mask, steps)) hands
    its RoPE, forward by forward, against the canonical ones of the sequence so far: the i-th forward of a greedy
    generation hands the last tokens of the prompt and the i tokens generated so far (the whole prompt first; one token
    a step with a cache, the whole sequence again without one), each forward making ``per_forward`` RoPE calls, as the
    prefill of its forward did. None where checked; what was not, as a note."""
    try:
        _, seen = bind.fresh(e).generated(ids, mask=mask, steps=steps)
    except Unsupported as u:
        return f"its own generate: not asked ({u})"
    b, n = ids.shape
    seen = [np.broadcast_to(p, (b,) + p.shape[1:]) if p.ndim >= 2 and p.shape[0] == 1 and b > 1 else p for p in seen]
    forwards = [seen[i:i + per_forward] for i in range(0, len(seen), per_forward)]
    full = np.concatenate([mask, np.ones((b, steps), dtype=np.int64)], axis=1)
    for i, group in enumerate(forwards):
        w, end = group[0].shape[1] if group[0].ndim >= 2 else 0, n + i
        if len(group) != per_forward or not 0 < w <= end or any(np.shape(p)[:2] != (b, w) for p in group):
            return (f"its own generate: its {len(seen)} RoPE calls are not {per_forward} a forward of a greedy "
                    f"generation's tokens, not compared")
        so_far = full[:, :end]
        where = "its own generate's prefill" if i == 0 else f"its own generate's decoding step {i}"
        check_positions(e, group, canonical(e, so_far)[:, end - w:], so_far[:, end - w:], where, pads, past=end - w)
    return None


# -- model.padding -------------------------------------------------------------------------------------------------
@rope_property("model.padding",
               rule=("model_logits_bound: two float64 forwards of one function in another order differ by at most "
                     "2 (layers + 1) gamma_n max |logit| (Higham 3.1), with the tiny model's sizes"),
               cases=_cases, pinned=_pinned)
def test_model_padding(bind, case):
    """Each row's real tokens' logits in the padded batch, through prefill and decoding steps, against the row alone."""
    e = case["expect"]
    rows = case["rows"]
    ids, mask, pads = left_padded(rows)
    forwards = list(_schedule(bind.fresh(e), ids, mask, case["steps"]))
    outs, kept = [f[0] for f in forwards], forwards[0][3]
    steps = case["steps"] if kept else []
    worst = 0.0
    for r, row in enumerate(rows):
        alone = bind.fresh(e)
        mine, _, c1 = reference_forward(e, alone, np.array([row]), f"row {r} alone ({len(row)} tokens)")
        theirs = [outs[0][r:r + 1, pads[r]:]]
        own = [mine]
        for s, step in enumerate(steps):
            got, _, c1 = reference_forward(e, alone, np.array([[step[r]]]), f"row {r} alone, decoding step {s + 1}",
                                           cache=c1, past=len(row) + s)
            own.append(got)
            theirs.append(outs[s + 1][r:r + 1])
        for k, (a, b) in enumerate(zip(theirs, own)):
            bound = tolerance.model_logits_bound(e.dtype, b)
            err = float(np.max(np.abs(a - b)))
            if not err <= bound:
                where = "the prefill" if k == 0 else f"decoding step {k}"
                differ = (f"row {r} ({len(row)} tokens, {pads[r]} pads) in a batch of {len(rows)}: its logits at "
                          f"{where} differ from the row's alone by {err:.3g} > bound {bound:.3g}")
                raise _padding_fault(e, forwards[:k + 1], where, pads, r, differ,
                                     err / bound if bound else float("inf"))
            worst = max(worst, err / bound if bound else 0.0)
    return (worst, f"the prefill only: {NO_CACHE}") if not kept and case["steps"] else worst


def _padding_fault(e, forwards, where: str, pads, r: int, differ: str, ratio: float) -> Failure:
    """The word of a padded batch's logits that differ from a row's alone, from the positions the forwards up to the
    one that differs handed their RoPE (the prefill's, then each decoding step's; a key turned wrong in the prefill
    shows at a later step): the first that is not the canonical ones names the fault (its left padding counted, the
    cache's offset, ...); where all are right and the row has pads, its real tokens see its pads (padding-mask); else
    nothing measured tells which."""
    for k, (logits, seen, full_mask, _) in enumerate(forwards):
        n = logits.shape[1]  # the tokens this forward was handed
        at = "the prefill" if k == 0 else f"decoding step {k}"
        try:
            check_positions(e, seen, canonical(e, full_mask)[:, -n:], full_mask[:, -n:], at, pads,
                            past=full_mask.shape[1] - n)
        except Failure as f:
            return Failure(f"{differ}: {f.what}", f.diagnosis, ratio)
    _, seen, full_mask, _ = forwards[-1]
    right = said(seen[0][r][full_mask[r, -forwards[-1][0].shape[1]:] == 1])
    if pads[r]:
        return Failure(f"{differ}: its positions up to {where} are right ({right} there): its real tokens see its "
                       f"{pads[r]} pads", "padding-mask", ratio)
    return Failure(f"{differ}, with no pads of its own and its positions up to {where} right ({right} there)", "unknown",
                   ratio)


# -- model.cache ---------------------------------------------------------------------------------------------------
@rope_property("model.cache", rule="model_logits_bound, as model.padding", cases=_cases, pinned=_pinned)
def test_model_cache(bind, case):
    """One row (the longest, its decoding steps appended) in chunks of ``chunk`` then one token at a time, against one
    full forward of the whole sequence, token by token."""
    e = case["expect"]
    row = max(case["rows"], key=len) + [s[0] for s in case["steps"]]
    ids = np.array([row])
    full, _, _ = reference_forward(e, bind.fresh(e), ids, f"one full forward of {len(row)} tokens")
    model = bind.fresh(e)
    cache, c, n0 = None, case["chunk"], max(len(r) for r in case["rows"])
    cuts = list(range(0, n0, c)) + list(range(n0, len(row)))
    worst = 0.0
    for k, start in enumerate(cuts):
        end = cuts[k + 1] if k + 1 < len(cuts) else len(row)
        logits, seen, cache = model.forward(ids[:, start:end], cache=cache)
        _needs_cache(cache, "a forward in chunks")
        bound = tolerance.model_logits_bound(e.dtype, full[:, start:end])
        err = float(np.max(np.abs(logits - full[:, start:end])))
        what = (f"token {start}" if end - start == 1 else f"tokens {start} to {end - 1}") + \
            (f" (a chunk of {c} of the prefill)" if start < n0 else " (a decoding step)")
        if not err <= bound:
            want = canonical(e, np.ones((1, end), dtype=np.int64))[:, start:end]
            try:
                check_positions(e, seen, want, np.ones((1, end - start), dtype=np.int64), what, past=start)
            except Failure as f:
                raise Failure(f"{f.what}; their logits differ from one full forward's by {err:.3g} > bound "
                              f"{bound:.3g}", f.diagnosis, err / bound) from None
            raise Failure(f"{what} after {start} cached tokens: their logits differ from one full forward's by "
                          f"{err:.3g} > bound {bound:.3g}, the positions right ({said(seen[0][0])}): what the cache "
                          f"keeps is not what the full forward computes", "unknown", err / bound)
        worst = max(worst, err / bound if bound else 0.0)
    return worst


# -- model.canonical -----------------------------------------------------------------------------------------------
@rope_property("model.canonical", rule="model_logits_bound, as model.padding; positions exact", cases=_cases,
               pinned=_pinned)
def test_model_canonical(bind, case):
    """The padded batch with its positions inferred against the same batch given the canonical positions."""
    e = case["expect"]
    ids, mask, pads = left_padded(case["rows"])
    want = canonical(e, mask)
    given = np.where(real_mask(mask, want.shape), want, 1)  # a pad at 1, as transformers' generate gives it
    a, seen_a, _ = bind.fresh(e).forward(ids, mask=mask)
    b, seen_b, _ = bind.fresh(e).forward(ids, mask=mask, positions=given)
    check_positions(e, seen_b, want, mask, "given the canonical positions")
    check_positions(e, seen_a, want, mask, "with its positions inferred", pads)
    worst = same_logits(e, a, b, mask == 1, "with its positions inferred its logits differ from those given the "
                         "canonical positions", "the positions the same", "unknown")
    try:  # a model that takes its tokens' embeddings too (inputs_embeds): the same positions and logits from them
        c, seen_c, _ = bind.fresh(e).forward(ids, mask=mask, embeds=True)
    except Unsupported:
        return worst
    check_positions(e, seen_c, want, mask, "given its tokens' embeddings (inputs_embeds)", pads)
    return max(worst, same_logits(e, c, a, mask == 1, "given its tokens' embeddings its logits differ from those "
                                   "given their ids", "the positions the same", "unknown"))


# -- model.stateless -----------------------------------------------------------------------------------------------
@rope_property("model.stateless", rule="model_logits_bound, as model.padding; buffers and attributes exactly",
               cases=_cases, pinned=_pinned)
def test_model_stateless(bind, case):
    """A batch's prefill and decoding steps after a call (a prefill and a step) of another batch, one row larger and
    its rows in the other order (so that each row's padding, and the batch's size, differ between the calls), against
    the same on a fresh model: the positions exactly, the logits to the bound; and no buffer or attribute of the model
    changed by the calls. The call raising after another, where it runs on a fresh model, is state kept too."""
    e = case["expect"]
    rows = case["rows"]
    ids, mask, _ = left_padded(rows)
    earlier = [list(reversed(r)) + [7] for r in reversed(rows)] + [[8]]
    other_ids, other_mask, _ = left_padded(earlier)
    fresh = bind.fresh(e)
    before = fresh.state()
    want = list(_schedule(fresh, ids, mask, case["steps"]))
    used = bind.fresh(e)
    _, _, cache = used.forward(other_ids, mask=other_mask)
    if case["steps"] and cache is not None:
        used.forward(np.array([*case["steps"][0][::-1], 9])[:, None],
                     mask=np.concatenate([other_mask, np.ones((len(earlier), 1), dtype=np.int64)], axis=1),
                     cache=cache)
    try:
        got = list(_schedule(used, ids, mask, case["steps"]))
    except Fault as f:
        if f.diagnosis != "exception":
            raise
        raise Failure(f"a call after another (a batch of {len(earlier)} rows) raised where it runs on a fresh model: "
                      f"{f.what}: the earlier call's state is used", "stale-state") from None
    after = used.state()
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    kept = (f"; its {', '.join(changed[:4])}" + (" ..." if len(changed) > 4 else "") + " differ from a fresh model's"
            if changed else "")
    worst = 0.0
    for k, ((logits, seen, full_mask, _), (want_logits, seen_fresh, _, _)) in enumerate(zip(got, want)):
        where = "its prefill" if k == 0 else f"its decoding step {k}"
        step_mask = full_mask[:, -logits.shape[1]:]  # the new tokens
        real = real_mask(step_mask, seen_fresh[0].shape)
        if len(seen) != len(seen_fresh) or any(not np.array_equal(a[real], b[real]) for a, b in zip(seen, seen_fresh)):
            r = int(np.argwhere(np.any(seen[0] != seen_fresh[0], axis=tuple(range(1, seen[0].ndim))))[0][0]) \
                if seen and seen[0].shape == seen_fresh[0].shape else 0
            raise Failure(f"a call after another turned, at {where}, row {r}'s tokens at "
                          f"{said(seen[0][r][step_mask[r] == 1])} where a fresh model turns them at "
                          f"{said(seen_fresh[0][r][step_mask[r] == 1])}{kept}: the earlier call's state is used",
                          "stale-state")
        worst = max(worst, same_logits(e, logits, want_logits, step_mask == 1, f"a call after another differs, at "
                                        f"{where}, from the same call on a fresh model", "the earlier call's state is "
                                        "used" + kept, "stale-state"))
    notes = [f"the prefill only: {NO_CACHE}"] if not want[0][3] and case["steps"] else []
    notes += _generated_twice(bind, e, (ids, mask), (other_ids, other_mask), max(2, len(case["steps"])))
    return (worst, "; ".join(notes)) if notes else worst


def _generated_twice(bind, e, batch, other, steps: int) -> list[str]:
    """The model's own greedy generation of a batch after one of the other batch, against it once on a fresh model:
    the same tokens, exactly (what is not checked, as a note)."""
    try:
        once = bind.fresh(e).generate(batch[0], mask=batch[1], steps=steps)
    except Unsupported as u:
        return [f"generate twice: not asked ({u})"]
    used = bind.fresh(e)
    used.generate(other[0], mask=other[1], steps=steps)
    try:
        twice = used.generate(batch[0], mask=batch[1], steps=steps)
    except Fault as f:
        if f.diagnosis != "exception":
            raise
        raise Failure(f"generate after a generate of another batch ({len(other[0])} rows) raised where it runs on a "
                      f"fresh model: {f.what}: the earlier call's state is used", "stale-state") from None
    if once.shape != twice.shape or not np.array_equal(once, twice):
        r = next((r for r in range(min(len(once), len(twice))) if not np.array_equal(once[r], twice[r])), 0)
        raise Failure(f"generate after a generate of another batch appended row {r}'s tokens "
                      f"{said(twice[r] if r < len(twice) else twice)} where once on a fresh model it appends "
                      f"{said(once[r])}: the earlier call's state is used", "stale-state")
    return []


# -- model.length --------------------------------------------------------------------------------------------------
#: the original length a case decodes across (the expectation's, shortened to this: every case crosses it cheaply)
SHORT_ORIGINAL = 24


def _lengthwise(impl) -> str | None:
    e = expect_of(impl)
    if not e.method.length_dependent:
        return f"the expectation's RoPE ({e.rope_type}) does not depend on the sequence's length"
    return None


def _across(e) -> Expect:
    """``e`` with its original length SHORT_ORIGINAL (per-pair factors kept), and room past it."""
    L = SHORT_ORIGINAL
    scaling = dict(e.to_dict()["rope_scaling"], original_max_position_embeddings=L)
    return e.replace(rope_scaling=scaling, max_position=max(4 * L, min(e.max_position, 4 * L)))


def _length_cases(impl):
    e = _across(expect_of(impl))

    @st.composite
    def build(draw):
        before = draw(st.integers(1, 3), label="tokens before the original length at the prefill")
        row = draw(st.lists(st.integers(0, MIN_VOCAB - 1), min_size=SHORT_ORIGINAL + 3,
                            max_size=SHORT_ORIGINAL + 3), label="row")
        return {"expect": e, "row": row, "before": before}

    return build()


def _original(model, e) -> tuple[int, str, int | None]:
    """Where the model's RoPE switches tables: the original length its own config says (a model handed over, whatever
    the expectation), else the expectation's; with whose it is, in words, and the largest position it takes."""
    try:
        own, top = model.lengths()
    except Unsupported:
        own = top = None
    return (own, "its own config's", top) if own else (original_length(e), "the expectation's", top)


@rope_property("model.length", rule="model_logits_bound, as model.padding", cases=_length_cases,
               pinned=lambda impl: [] if _lengthwise(impl) else [
                   {"expect": _across(expect_of(impl)), "row": [(7 * i) % MIN_VOCAB for i in range(SHORT_ORIGINAL + 3)],
                    "before": 1}],
               not_about=_lengthwise)
def test_model_length(bind, case):
    """A prefill ending just before the original length L (the model's own config's, else the expectation's), then
    one token at a time to L + 3: each step's logits against the last token's of one full forward of the sequence up
    to it (on a fresh model)."""
    e = case["expect"]
    model = bind.fresh(e)
    L, whose, top = _original(model, e)
    if top is not None and L + 3 > top:
        raise NotChecked(f"the model's original length {L} ({whose}) leaves no room to decode across it: it takes "
                         f"{top} positions")
    row = (list(case["row"]) + [(7 * i) % MIN_VOCAB for i in range(L + 3)])[:L + 3]
    n0 = max(1, L - case["before"])
    ids = np.array([row])
    _, _, cache = model.forward(ids[:, :n0])
    _needs_cache(cache, "decoding across the original length")
    worst = 0.0
    for t in range(n0, len(row)):
        got, _, cache = model.forward(ids[:, t:t + 1], cache=cache)
        full, _, _ = bind.fresh(e).forward(ids[:, :t + 1])
        want = full[:, -1:]
        bound = tolerance.model_logits_bound(e.dtype, want)
        err = float(np.max(np.abs(got - want)))
        if not err <= bound:
            side = "before" if t + 1 < L else "at" if t + 1 == L else "past"
            raise Failure(f"the step to length {t + 1} ({side} the original length {L}, {whose}; prefill {n0}): its "
                          f"logits differ from one full forward of the sequence up to it by {err:.3g} > bound "
                          f"{bound:.3g}: the cache keeps keys turned with the {e.rope_type} table of another length",
                          "scaling", err / bound if bound else float("inf"))
        worst = max(worst, err / bound if bound else 0.0)
    return worst
