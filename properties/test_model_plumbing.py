"""Spec section "model", continued: how positions meet packing, sliding windows, a context shift, context-parallel
shards and drafts (shared/design/PLUMBING.md: PACK, WIN, SHIFT, CP, SPEC), through the model family's doors (its
forward, its packing door, its layers' outputs, its shift, shard builder, crop and assisted generation; a door a model
lacks is said, and nothing is checked).

Positions are compared as integers; logits to the float64 forward's rounding (model_logits_bound); a window by which
tokens' outputs a changed token reaches, layer by layer (a masked key's weight is exactly zero, so a token outside
every window changes nothing at all)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import DeclinedCase, Failure, Unsupported
from ropespec.properties.cases import listed
from ropespec.properties.framework import NotChecked, rope_property
from ropespec.properties.model_batch import (MIN_VOCAB, canonical, check_positions, expect_of, left_padded,
                                             real_mask, reference_forward, same_logits)
from ropespec.spec import tolerance


def _door(call, *args, **kwargs):
    """``call``, where a door the model lacks (its Unsupported) is the whole model's: the property skips at once; a door
    that declines this one input (DeclinedCase: its NotImplementedError) has the case not asked, and the others asked."""
    try:
        return call(*args, **kwargs)
    except DeclinedCase:
        raise
    except Unsupported as u:
        raise NotChecked(str(u)) from None


def _on_axes(e, p: np.ndarray) -> np.ndarray:
    """Positions (B, T) as the expectation takes them: every axis of a multi-axis RoPE alike, (B, T, axes)."""
    return p[..., None].repeat(e.n_axes, axis=-1) if e.multi_axis else p


def _per_document(e, lengths) -> np.ndarray:
    """Each document's tokens from 0, (1, T[, axes])."""
    return _on_axes(e, np.concatenate([np.arange(n) for n in lengths])[None])


def _spans(lengths):
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return [(int(a), int(a + n)) for a, n in zip(starts, lengths)]


def _axis0(p: np.ndarray) -> np.ndarray:
    return p[..., 0] if p.ndim == 3 else p


# -- model.packing -----------------------------------------------------------------------------------------------
def _packing_cases(impl):
    e = expect_of(impl)

    @st.composite
    def build(draw):
        docs = [draw(st.lists(st.integers(0, MIN_VOCAB - 1), min_size=1, max_size=5), label="document")
                for _ in range(draw(st.integers(2, 3), label="documents"))]
        return {"expect": e, "docs": docs, "offset": draw(st.integers(1, 8), label="offset"),
                "step": draw(st.integers(0, MIN_VOCAB - 1), label="step")}

    return build()


def _vision_block(e, n: int, offset: int) -> np.ndarray | None:
    """A multi-axis row of n tokens (n >= 6) whose tokens 2 to 5 are a 2 x 2 vision block: its temporal axis repeats
    one position, its height and width axes step through the grid, and the text after it resumes one past the grid's
    largest position (M-RoPE's ids, Qwen2-VL's get_rope_index); None where the RoPE has no three axes."""
    if not e.multi_axis or e.n_axes != 3 or n < 6:
        return None
    rows = np.zeros((n, 3), dtype=np.int64)
    rows[:2] = (offset + np.arange(2))[:, None]
    s = offset + 2
    rows[2:6] = np.array([[s, s, s], [s, s, s + 1], [s, s + 1, s], [s, s + 1, s + 1]])
    rows[6:] = (s + 2 + np.arange(n - 6))[:, None]
    return rows[None]


@rope_property("model.packing", rule="exact: integers; logits model_logits_bound, as model.padding",
               cases=_packing_cases,
               pinned=lambda impl: [{"expect": expect_of(impl), "docs": [[3, 1, 4, 1], [5, 9, 2], [6, 5]], "offset": 4,
                                     "step": 7}])
def test_model_packing(bind, case):
    """Documents packed into one row by the model's packing door against each document alone (positions exactly, then
    logits); then what is one sequence, without an attention mask, against it with one: a row at an offset, a decoding
    step after a cache, and multi-axis ids with a vision block."""
    e, docs = case["expect"], case["docs"]
    lengths = [len(d) for d in docs]
    ids = np.array([sum(docs, [])])
    logits, seen = _door(bind.fresh(e).packed, ids, lengths)
    want = _per_document(e, lengths)
    for got in seen:
        if got.shape != want.shape:
            raise Failure(f"the packed row: the model handed its RoPE positions of shape {got.shape}, expected "
                          f"{want.shape}", "shape")
        for k, (a, b) in enumerate(_spans(lengths)):
            g, w = _axis0(got)[0, a:b], _axis0(want)[0, a:b]
            if np.array_equal(got[:, a:b], want[:, a:b]):
                continue
            said = (f"the packed row of {len(docs)} documents ({', '.join(map(str, lengths))} tokens): document "
                    f"{k + 1} (tokens {a} to {b - 1}) was turned at positions {listed(g)} where {listed(w)} are due")
            if k and np.array_equal(g, w + a):
                raise Failure(f"{said}: it continues the positions of the documents before it", "document-positions")
            raise Failure(said, "document-positions")
    worst = 0.0
    for k, ((a, b), doc) in enumerate(zip(_spans(lengths), docs)):
        alone, _, _ = reference_forward(e, bind.fresh(e), np.array([doc]), f"document {k + 1} alone ({len(doc)} tokens)")
        worst = max(worst, same_logits(e, logits[:, a:b], alone, np.ones((1, b - a), dtype=bool),
                                        f"the packed row: document {k + 1}'s logits (tokens {a} to {b - 1}) differ "
                                        f"from the document's alone", "its positions are right: it attends to the "
                                        "tokens of the documents before it", "packing-mask"))
    return max(worst, _one_sequence(bind, e, ids, case["offset"], case["step"]))


def _one_sequence(bind, e, ids, offset: int, step: int) -> float:
    """One sequence without an attention mask (no documents said) against it with one: never split into documents."""
    n = ids.shape[1]
    ones = np.ones((1, n), dtype=np.int64)
    at = offset + np.arange(n)[None]
    rows = [(f"one row of {n} tokens at positions {listed(at[0])} (no documents said)", _on_axes(e, at))]
    block = _vision_block(e, n, offset)
    if block is not None:
        rows.append((f"one row of {n} tokens whose tokens 2 to 5 are a vision block (temporal positions "
                     f"{listed(block[0, :, 0])})", block))
    worst = 0.0
    for what, positions in rows:
        bare, _, _ = bind.fresh(e).bare(ids, positions)
        masked, _, _ = bind.fresh(e).bare(ids, positions, masked=True)
        worst = max(worst, same_logits(e, bare, masked, ones == 1, f"{what}: its logits without an attention mask "
                                        "differ from those with one", "it was split into documents where its "
                                        "positions do not step by one", "taken-for-packed"))
    # a decoding step after a cache, its position given, without an attention mask
    pos = rows[0][1]
    stepped = np.array([[step]])
    at_step = pos[:, -1:] + 1
    model = bind.fresh(e)
    _, _, cache = model.forward(ids, positions=pos, mask=ones)
    if cache is None:
        return worst
    bare, _, _ = model.bare(stepped, at_step, cache=cache)
    other = bind.fresh(e)
    _, _, c2 = other.forward(ids, positions=pos, mask=ones)
    try:  # the same call with a mask of ones: only the mask differs
        masked, _, _ = other.bare(stepped, at_step, cache=c2, masked=True)
    except Unsupported:  # a decoder's: its forward, the mask spanning the cache
        masked, _, _ = other.forward(stepped, positions=at_step, mask=np.ones((1, n + 1), dtype=np.int64), cache=c2)
    return max(worst, same_logits(e, bare, masked, np.ones((1, 1), dtype=bool),
                                   f"a decoding step at position {int(_axis0(at_step)[0, 0])} after {n} cached tokens: "
                                   "its logits without an attention mask differ from those with one",
                                   "the one new token was taken for a document of its own", "taken-for-packed"))


# -- model.window ------------------------------------------------------------------------------------------------
#: the row a window is measured on is at least this long, and three times the widest window
MIN_ROW = 16
#: a row is at most this long: a model's window wider than a third of it is not measured (said)
MAX_ROW = 48


def _window_cases(impl):
    e = expect_of(impl)

    @st.composite
    def build(draw):
        return {"expect": e, "row": draw(st.lists(st.integers(0, MIN_VOCAB - 1), min_size=MAX_ROW, max_size=MAX_ROW),
                                         label="row"),
                "changed": draw(st.lists(st.floats(0, 0.5), min_size=3, max_size=3), label="where tokens change"),
                "pads": draw(st.integers(1, 3), label="pads")}

    return build()


def _reach(changed_in: np.ndarray, changed_out: np.ndarray) -> int:
    """The most keys any changed output lies from the nearest token at or before it whose input changed, plus one
    (the keys it reaches, itself included); 0 where nothing changed."""
    ins = np.flatnonzero(changed_in)
    if not ins.size:
        return 0
    width = 0
    for t in np.flatnonzero(changed_out):
        before = ins[ins <= t]
        if before.size:
            width = max(width, int(t - before[-1]) + 1)
    return width


def _layer_outputs(model, ids, mask, schedule: str, n0: int):
    """Each layer's output at every real token of row 0, (layers, T), by ``schedule``: one prefill, or a prefill of
    n0 tokens and then one token at a time from the cache."""
    if schedule == "prefill":
        _, _, _, h = model.forward_layers(ids, mask=mask)
        return h[:, 0]
    _, _, cache, h = model.forward_layers(ids[:, :n0], mask=mask[:, :n0])
    parts = [h[:, 0]]
    for t in range(n0, ids.shape[1]):
        _, _, cache, h = model.forward_layers(ids[:, t:t + 1], mask=mask[:, :t + 1], cache=cache)
        if cache is None:
            raise Unsupported("the model returned no cache from its forward: decoding past the window needs one")
        parts.append(h[:, 0])
    return np.concatenate(parts, axis=1)


@rope_property("model.window",
               rule=("exact: a key outside a layer's window has weight exactly 0, so the outputs it cannot reach do "
                     "not move at all; a change is one past model_logits_bound of the layer's largest output"),
               cases=_window_cases,
               pinned=lambda impl: [{"expect": expect_of(impl), "row": [(5 * i + 3) % MIN_VOCAB for i in range(MAX_ROW)],
                                     "changed": [0.0, 0.2, 0.4], "pads": 2}])
def test_model_window(bind, case):
    """Three tokens of a row changed, one at a time: which of each layer's outputs move, against the layer's window
    (its w keys, itself included; every earlier token for a global layer), in one prefill, in decoding steps past the
    window from a cache, and with the row left-padded in a batch."""
    e = case["expect"]
    model = bind.fresh(e)
    layers = _door(model.windows)
    widths = [w for kind, w in layers if kind == "sliding"]
    n = max(MIN_ROW, 3 * max(widths, default=0) + 2)
    if n > MAX_ROW:
        raise NotChecked(f"its widest window, {max(widths)} keys, needs a row of {n} tokens (at most {MAX_ROW} are "
                          "drawn): the window is not measured")
    row = np.array(case["row"][:n])
    notes: list[str] = []
    for schedule, pads in (("prefill", 0), ("decoding", 0), ("prefill", case["pads"])):
        ids = np.concatenate([np.zeros(pads, dtype=np.int64), row])[None]
        mask = (np.arange(n + pads) >= pads).astype(np.int64)[None]
        if pads:  # a second row, unpadded, so that the batch is padded as a generate batch is
            ids = np.concatenate([ids, np.concatenate([row[:pads] + 1, row])[None] % MIN_VOCAB])
            mask = np.concatenate([mask, np.ones_like(mask)])
        n0 = max(widths, default=4) + 1
        base = _door(_layer_outputs, bind.fresh(e), ids, mask, schedule, n0)[:, pads:]
        if base.shape[0] != len(layers):
            raise NotChecked(f"its forward hands {base.shape[0]} layers' outputs and declares {len(layers)} layers: "
                              "the outputs are not matched to the layers")
        where = {"prefill": "one prefill", "decoding": f"a prefill of {n0} tokens then one token at a time"}[schedule]
        where += f", the row behind {pads} pads" if pads else ""
        seen: dict[int, list] = {}  # layer -> (reach, keys past its inputs, what was changed) per changed token
        for frac in case["changed"]:
            j = int(frac * n)
            changed = ids.copy()
            changed[0, pads + j] = (changed[0, pads + j] + 1 + j) % MIN_VOCAB
            other = _layer_outputs(bind.fresh(e), changed, mask, schedule, n0)[:, pads:]
            notes += _reaches(e, layers, base, other, j, n, where, seen)
        _too_short(layers, widths, seen)
    return (0.0, "; ".join(dict.fromkeys(notes))) if notes else 0.0


def _reaches(e, layers, base, other, j: int, n: int, where: str, seen: dict) -> list[str]:
    """Each layer's reach from token j: a Failure where a sliding layer reaches past its window (a nonzero change
    where every weight is exactly zero is proof); what each layer reached, into ``seen``; the layers not judged, as
    notes."""
    moved = np.stack([np.max(np.abs(base[l] - other[l]), axis=-1) > tolerance.model_logits_bound(e.dtype, base[l])
                      for l in range(len(layers))])
    before = np.zeros(n, dtype=bool)
    before[j] = True
    for l, (kind, w) in enumerate(layers):
        out = moved[l]
        width = _reach(before, out)
        far = n - 1 - int(np.flatnonzero(before).max())  # keys past the last changed input the row still has
        said = (f"{where}: token {j} changed, layer {l} ({'sliding, window ' + str(w) if kind == 'sliding' else kind}) "
                f"moves the outputs at {listed(np.flatnonzero(out))} from inputs moved at "
                f"{listed(np.flatnonzero(before))}")
        if kind == "sliding" and width > w:
            raise Failure(f"{said}: its window reaches {width} keys, expected {w}", "window-reach")
        if kind not in ("sliding", "full"):
            return [f"layer {l} is a {kind} layer (not a window): the layers from it on are not judged"]
        seen.setdefault(l, []).append((width, far, said))
        before = out
    return []


def _too_short(layers, widths, seen: dict) -> None:
    """A layer that reached less than its window (a global layer: no farther than the widest window) from every
    changed token that left it room: a Failure. One token's farthest key may weigh too little to move an output in
    float64 (a peaked softmax), so a short reach is said only where every changed token's was short."""
    for l, (kind, w) in enumerate(layers):
        judged = [(width, far, said) for width, far, said in seen.get(l, [])
                  if (far >= w - 1 if kind == "sliding" else far + 1 > max(widths, default=(far + 1) // 2))]
        if not judged:
            continue
        width, far, said = max(judged)
        if kind == "sliding" and width < w:
            raise Failure(f"{said}: its window reaches {width} keys, expected {w} (from each of {len(judged)} changed "
                          "tokens)", "window-reach")
        limit = max(widths, default=(far + 1) // 2)
        if kind == "full" and width <= limit:
            raise Failure(f"{said}: a global layer reaches at most {width} keys from each of {len(judged)} changed "
                          f"tokens, none of the {far + 1 - width} farther: it is windowed", "window-reach")


# -- model.shift -------------------------------------------------------------------------------------------------
def _not_rope_alone(impl) -> str | None:
    """Why the expectation's encoding is more than RoPE, whose logits move with the positions themselves; else None."""
    e = expect_of(impl)
    if e.method.length_dependent:
        return f"the expectation's RoPE ({e.rope_type}) changes its table with the sequence's length"
    if e.params("attention").query_temperature_beta:
        return "the expectation has a query temperature by position (query_temperature_beta)"
    return None


def _shift_cases(impl):
    e = expect_of(impl)

    @st.composite
    def build(draw):
        return {"expect": e, "row": draw(st.lists(st.integers(0, MIN_VOCAB - 1), min_size=2, max_size=6), label="row"),
                "shift": draw(st.integers(1, 40), label="shift"),
                "step": draw(st.integers(0, MIN_VOCAB - 1), label="step")}

    return build()


@rope_property("model.shift", rule="model_offset_bound, a cached key turned twice", cases=_shift_cases,
               skip_if=_not_rope_alone,
               pinned=lambda impl: [{"expect": expect_of(impl), "row": [3, 1, 4, 1, 5], "shift": 7, "step": 9}])
def test_model_shift(bind, case):
    """A prefill at positions 0 ... n - 1, its cache shifted by d by the model's own shift, then a token decoded at
    n + d; against a prefill at d ... n - 1 + d and the same token at n + d."""
    e, row, d = case["expect"], case["row"], case["shift"]
    n = len(row)
    ids = np.array([row])
    model = bind.fresh(e)
    _, _, cache = model.forward(ids, positions=_on_axes(e, np.arange(n)[None]))
    if cache is None:
        raise NotChecked("the model returned no cache from its forward: a shift needs one")
    shifted = _door(model.shift, cache, d)
    step = np.array([[case["step"]]])
    got, _, _ = model.forward(step, positions=_on_axes(e, np.array([[n + d]])),
                              mask=np.ones((1, n + 1), dtype=np.int64),
                              cache=shifted)
    fresh = bind.fresh(e)
    _, _, c2 = fresh.forward(ids, positions=_on_axes(e, d + np.arange(n)[None]))
    want, _, _ = fresh.forward(step, positions=_on_axes(e, np.array([[n + d]])),
                               mask=np.ones((1, n + 1), dtype=np.int64),
                               cache=c2)
    partial = (f" (partial rotary: {e.rotary_dim} of {e.head_dim} dims turn)" if e.rotary_dim < e.head_dim else "")
    bound = tolerance.model_offset_bound(e, want, n + d, rotations=2)
    err = float(np.max(np.abs(got - want)))
    if err <= bound:
        return err / bound if bound else 0.0
    moved = _offset_moves(bind, e, ids, d)  # a model whose logits move with an offset cannot have its shift judged
    if moved:
        raise Failure(f"a token at position {n + d} after {n} cached keys shifted by {d} differs from the same after "
                      f"keys turned at {d} ... {n - 1 + d} by {err:.3g}, and {moved}: the model reads the absolute "
                      "positions elsewhere, and its shift cannot be told apart from it", "absolute-position",
                      err / bound if bound else float("inf"))
    raise Failure(f"a token at position {n + d} after {n} cached keys shifted by {d}: its logits differ from those "
                  f"after keys turned at {d} ... {n - 1 + d}{partial} by {err:.3g} > bound {bound:.3g}: the prefill's "
                  "logits do not move with the offset, so the shift re-rotates the cached keys otherwise than turning "
                  "them by d", "kv-shift", err / bound if bound else float("inf"))


def _offset_moves(bind, e, ids, c: int) -> str:
    """What moves when a prefill's positions move by c (its logits past model_offset_bound), or ""."""
    n = ids.shape[1]
    want, _, _ = bind.fresh(e).forward(ids, positions=_on_axes(e, np.arange(n)[None]))
    got, _, _ = bind.fresh(e).forward(ids, positions=_on_axes(e, c + np.arange(n)[None]))
    err, bound = float(np.max(np.abs(got - want))), tolerance.model_offset_bound(e, want, c + n)
    return f"its prefill's logits move by {err:.3g} > {bound:.3g} with its positions moved by {c}" if err > bound else ""


# -- model.offset ------------------------------------------------------------------------------------------------
@rope_property("model.offset", rule="model_offset_bound: model_logits_bound and the RoPE's own rounding at each "
               "position", cases=_shift_cases, skip_if=_not_rope_alone,
               pinned=lambda impl: [{"expect": expect_of(impl), "row": [3, 1, 4, 1, 5], "shift": 29, "step": 9}])
def test_model_offset(bind, case):
    """A row's prefill at positions c ... c + n - 1 and a token decoded at c + n, against the same at 0 ... n - 1 and n,
    its positions given (every axis alike); the positions each forward handed its RoPE are the ones given, as
    integers."""
    e, row, c = case["expect"], case["row"], case["shift"]
    n = len(row)
    ids, step = np.array([row]), np.array([[case["step"]]])

    def run(offset):
        model = bind.fresh(e)
        given = _on_axes(e, offset + np.arange(n)[None])
        got, seen, cache = model.forward(ids, positions=given)
        own = _on_axes(e, np.arange(n)[None])
        if offset and seen and all(p.shape == own.shape and np.array_equal(p, own) for p in seen):
            raise NotChecked(f"the model turns its tokens at its own positions (0 ... {n - 1}), not the ones given "
                             f"({offset} ... {offset + n - 1}): no offset can be given to it")
        _handed(seen, given, f"a prefill at {offset} ... {offset + n - 1}")
        if cache is None:
            return got
        nxt = _on_axes(e, np.array([[offset + n]]))
        more, seen, _ = model.forward(step, positions=nxt, mask=np.ones((1, n + 1), dtype=np.int64), cache=cache)
        _handed(seen, nxt, f"a decoding step at {offset + n}")
        return np.concatenate([got, more], axis=1)

    got, want = run(c), run(0)
    note = None
    if got.shape[1] != want.shape[1]:  # a cache from one prefill and none from the other: the prefills are compared
        note = (f"the decoding step not compared: the model returned a cache from its prefill at "
                f"{c if got.shape[1] > n else 0} ... and none from the one at {0 if got.shape[1] > n else c} ...")
        got, want = got[:, :n], want[:, :n]
    bound = tolerance.model_offset_bound(e, want, c + n)
    err = np.max(np.abs(got - want), axis=(0, 2))
    if not err.max() <= bound:
        t = int(np.argmax(err > bound))
        what = f"token {t}" if t < n else "the decoding step"
        raise Failure(f"every position moved by {c}: {what}'s logits differ from those at the positions themselves by "
                      f"{err.max():.3g} > bound {bound:.3g}: the positions handed the RoPE are the ones given: the model "
                      "reads the absolute positions elsewhere", "absolute-position",
                      err.max() / bound if bound else float("inf"))
    worst = float(err.max() / bound) if bound else 0.0
    return (worst, note) if note else worst


def _handed(seen, given, what: str) -> None:
    """Each record of the positions a forward handed its RoPE against the positions given, as integers."""
    for got in seen:
        if got.shape != given.shape or not np.array_equal(got, given):
            shift = np.unique(got - given) if got.shape == given.shape else []
            raise Failure(f"{what}: the RoPE was handed {listed(_axis0(got)[0])} where {listed(_axis0(given)[0])} "
                          "were given", "position-offset" if len(shift) == 1 else "unknown")


# -- model.shards ------------------------------------------------------------------------------------------------
SCHEMES = ("contiguous", "load-balanced")


def _shard_cases(impl):
    e = expect_of(impl)

    @st.composite
    def build(draw):
        cp = draw(st.sampled_from((2, 4)), label="cp")
        unit = 2 * cp  # each document a multiple of 2 cp tokens, as THD sharding pads them
        lengths = [unit * draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 3), label="documents"))]
        return {"expect": e, "lengths": lengths, "cp": cp, "scheme": draw(st.sampled_from(SCHEMES), label="scheme")}

    return build()


@rope_property("model.shards", rule="exact: integers", cases=_shard_cases,
               pinned=lambda impl: [{"expect": expect_of(impl), "lengths": [4, 8], "cp": 2, "scheme": "load-balanced"}])
def test_model_shards(bind, case):
    """Every rank's tokens and their positions from the model's shard builder: each token owned once, at its position
    in its own document."""
    e, lengths, cp, scheme = case["expect"], case["lengths"], case["cp"], case["scheme"]
    model = bind.fresh(e)
    want = _axis0(_per_document(e, lengths))[0]
    total = int(sum(lengths))
    owners = np.zeros(total, dtype=np.int64)
    spans = _spans(lengths)
    where = f"{len(lengths)} documents of {', '.join(map(str, lengths))} tokens over {cp} ranks, {scheme}"
    for rank in range(cp):
        idx, pos = _door(model.shard, lengths, cp, rank, scheme)
        if idx.size and (idx.min() < 0 or idx.max() >= total):
            raise Failure(f"{where}: rank {rank} owns token indices {listed(idx)} of a row of {total}", "shard-positions")
        np.add.at(owners, idx, 1)
        bad = np.flatnonzero(pos != want[idx])
        if bad.size:
            i = int(idx[bad[0]])
            k = next(k for k, (a, b) in enumerate(spans) if a <= i < b)
            mine = [m for m, t in enumerate(idx) if spans[k][0] <= t < spans[k][1]]
            raise Failure(f"{where}: rank {rank} turns document {k + 1}'s tokens {listed(idx[mine])} at positions "
                          f"{listed(pos[mine])} where {listed(want[idx[mine]])} are due", "shard-positions")
    if not np.all(owners == 1):
        t = int(np.flatnonzero(owners != 1)[0])
        raise Failure(f"{where}: token {t} is owned by {int(owners[t])} ranks", "shard-positions")
    return 0.0


# -- model.drafts ------------------------------------------------------------------------------------------------
def _draft_cases(impl):
    e = expect_of(impl)

    @st.composite
    def build(draw):
        token = st.integers(0, MIN_VOCAB - 1)
        rows = [draw(st.lists(token, min_size=1, max_size=5), label="row") for _ in range(draw(st.integers(1, 2)))]
        k = draw(st.integers(2, 4), label="drafts")
        return {"expect": e, "rows": rows, "step": draw(st.lists(token, min_size=len(rows), max_size=len(rows))),
                "drafts": [draw(st.lists(token, min_size=len(rows), max_size=len(rows))) for _ in range(k)],
                "accepted": draw(st.integers(0, k - 1), label="accepted"),
                "next": draw(st.lists(token, min_size=len(rows), max_size=len(rows)), label="next")}

    return build()


def _grow(mask: np.ndarray, t: int) -> np.ndarray:
    return np.concatenate([mask, np.ones((len(mask), t), dtype=np.int64)], axis=1)


def _check_drafted(e, seen, full_mask, t: int, what: str) -> None:
    """The positions a call of t tokens after ``past`` handed its RoPE against each token's own, as integers."""
    want = canonical(e, full_mask)[:, -t:]
    real = full_mask[:, -t:]
    for got in seen:
        if got.shape == want.shape and np.array_equal(got[real_mask(real, want.shape)], want[real_mask(real, want.shape)]):
            continue
        r = 0 if got.shape != want.shape else int(np.argwhere(np.any((got != want) & real_mask(real, want.shape),
                                                                     axis=tuple(range(1, got.ndim))))[0][0])
        g, w = _axis0(got)[r], _axis0(want)[r]
        shift = np.unique(g - w) if g.shape == w.shape else []
        how = (f": {int(shift[0])} past its tokens' own" if len(shift) == 1 and shift[0] > 0 else
               f": {-int(shift[0])} before its tokens' own" if len(shift) == 1 else "")
        raise Failure(f"{what}: row {r}'s tokens were turned at positions {listed(g)} where {listed(w)} are due{how}",
                      "draft-positions")


@rope_property("model.drafts", rule="exact: integers; logits model_logits_bound, as model.padding; tokens exactly",
               cases=_draft_cases,
               pinned=lambda impl: [{"expect": expect_of(impl), "rows": [[3, 1, 4, 1], [5, 9]], "step": [2, 6],
                                     "drafts": [[5, 3], [5, 8], [9, 7]], "accepted": 2, "next": [4, 6]}])
def test_model_drafts(bind, case):
    """A padded batch's prefill and one step, then k drafted tokens verified in one forward: its positions and logits
    against k single steps; the cache cut back to the j drafts accepted and the next token decoded: against the
    j steps and that token on a fresh model. Then, where the model generates with a draft, its assisted greedy
    generation with a draft always accepted and one nearly always rejected against its greedy generation."""
    e = case["expect"]
    ids, mask, pads = left_padded(case["rows"])
    drafts = np.array(case["drafts"]).T  # (B, k)
    k, j = drafts.shape[1], case["accepted"]
    step = np.array(case["step"])[:, None]

    def stepped(model):
        """The prefill and one decoding step, their positions checked first: a draft's word is said only where the
        plain decoding before it is right (a step that counts its row's pads is padding-shift here too)."""
        _, seen, cache = model.forward(ids, mask=mask)
        if cache is None:
            raise NotChecked("the model returned no cache from its forward: drafts need one")
        check_positions(e, seen, canonical(e, mask), mask, "the padded prefill before the drafts", pads)
        full = _grow(mask, 1)
        _, seen, cache = model.forward(step, mask=full, cache=cache)
        check_positions(e, seen, canonical(e, full)[:, -1:], full[:, -1:], "the decoding step before the drafts", pads,
                        past=full.shape[1] - 1)
        return cache, full

    model = bind.fresh(e)
    cache, full = stepped(model)
    n = full.shape[1]
    verify_mask = _grow(full, k)
    model.drafting(cache, k)
    got, seen, vcache = model.forward(drafts, mask=verify_mask, cache=cache)
    _check_drafted(e, seen, verify_mask, k, f"{k} drafts verified in one forward after {n} tokens")
    single = bind.fresh(e)
    c2, m2 = stepped(single)
    worst = 0.0
    for i in range(k):
        m2 = _grow(m2, 1)
        want, _, c2 = single.forward(drafts[:, i:i + 1], mask=m2, cache=c2)
        worst = max(worst, same_logits(e, got[:, i:i + 1], want, np.ones((len(ids), 1), dtype=bool),
                                        f"draft {i + 1} of {k} verified in one forward after {n} tokens: its logits "
                                        "differ from one step's", "the positions are right", "unknown"))
    try:
        cut = model.crop(vcache, n + j)
    except Unsupported as u:
        return worst, f"drafts rejected: not asked ({u})"
    nxt = np.array(case["next"])[:, None]
    after = _grow(full, j + 1)
    got, seen, _ = model.forward(nxt, mask=after, cache=cut)
    _check_drafted(e, seen, after, 1, f"the step after {j} of {k} drafts were accepted (the cache cut back to {n + j} "
                   "tokens)")
    fresh = bind.fresh(e)
    c3, m3 = stepped(fresh)
    for i in range(j):
        m3 = _grow(m3, 1)
        _, _, c3 = fresh.forward(drafts[:, i:i + 1], mask=m3, cache=c3)
    want, _, _ = fresh.forward(nxt, mask=_grow(m3, 1), cache=c3)
    worst = max(worst, same_logits(e, got, want, np.ones((len(ids), 1), dtype=bool),
                                    f"the step after {j} of {k} drafts were accepted: its logits differ from those "
                                    f"after the {j} accepted tokens decoded one by one", "the positions are right: the "
                                    "rejected drafts' keys are kept", "unknown"))
    notes = [n for n in (_assisted(bind, e, np.array([case["rows"][0]])), _expanded(bind, e, ids, mask)) if n]
    return worst, "; ".join(notes)


#: how many times generate continues each row where it is asked to expand them (a request's n samples)
COPIES = 2


def _expanded(bind, e, ids, mask) -> str:
    """The model's greedy generation of a padded batch, each row continued COPIES times, against once: each copy's
    decoding steps turned at its source row's positions (as integers) and appending its tokens; what is not asked,
    as the note."""
    try:
        once, seen_once = bind.fresh(e).generated(ids, mask=mask, steps=3)
        many, seen_many = bind.fresh(e).generated(ids, mask=mask, steps=3, copies=COPIES)
    except Unsupported as u:
        return f"expanded rows: not asked ({u})"
    # the calls of one token each, paired from the last (a prefill of one token, made before or after the rows are
    # expanded, is one of them: each is compared with its row's own)
    ones = lambda seen: [p for p in seen if p.ndim >= 2 and p.shape[1] == 1][::-1]  # noqa: E731
    for i, (got, want) in enumerate(zip(ones(seen_many), ones(seen_once))):
        source = want if got.shape[0] == want.shape[0] else np.repeat(want, COPIES, axis=0)
        where = f"the {'last' if i == 0 else f'{i + 1}th from last'} call of one token"
        if got.shape != source.shape:
            raise Failure(f"{where} with each of {len(want)} rows continued {COPIES} times turned {got.shape[0]} "
                          f"rows, expected {source.shape[0]}", "expanded-positions")
        bad = np.flatnonzero(np.any((got != source).reshape(len(got), -1), axis=1))
        if bad.size:
            r, per = int(bad[0]), COPIES if len(source) > len(want) else 1
            raise Failure(f"{where} with each row continued {COPIES} times: copy {r % per} of row {r // per} was "
                          f"turned at {listed(_axis0(got)[r])} where its row's is {listed(_axis0(source)[r])}",
                          "expanded-positions")
    if many.shape != (len(once) * COPIES,) + once.shape[1:] or not np.array_equal(many, np.repeat(once, COPIES, 0)):
        r = next((r for r in range(min(len(many), len(once) * COPIES))
                  if not np.array_equal(many[r], once[r // COPIES])), 0)
        raise Failure(f"with each row continued {COPIES} times, copy {r % COPIES} of row {r // COPIES} appends "
                      f"{listed(many[r]) if r < len(many) else 'nothing'} where the row alone appends "
                      f"{listed(once[r // COPIES])}", "unknown")
    return ""


def _verified_in_order(forwards, n: int, steps: int, says: str) -> None:
    """The positions of an assisted generation's forwards, whatever its drafts' fate: each forward's consecutive, the
    prompt's from 0, each verification round starting after the round before it started and no later than one past
    its last token (the tokens it accepted, counted), and every token generated but the last fed at its own position
    (the prompt's n tokens and steps - 1 of them: n + steps - 2 the last). A counter advanced by one a round instead of
    by the drafts it accepted lags behind the tokens it appends."""
    end = None
    reached = -1
    for i, p in enumerate(forwards):
        row = _axis0(p)[0] if np.ndim(p) >= 2 else None
        if row is None or not len(row):
            return
        where = f"assisted generation with {says} ({steps} steps): forward {i + 1}"
        if not np.array_equal(np.diff(row), np.ones(len(row) - 1, dtype=row.dtype)):
            raise Failure(f"{where} turned its tokens at {listed(row)}: not one after another", "draft-positions")
        if end is None and row[0] != 0:
            raise Failure(f"{where}, the prompt's, turned it at {listed(row)}, not from 0", "draft-positions")
        if end is not None and not start < int(row[0]) <= end:
            raise Failure(f"{where} turned its tokens at {listed(row)} after the forward at {listed(before)}: a round "
                          f"starts after the one before it and no later than one past it", "draft-positions")
        start, end, before = int(row[0]), int(row[-1]) + 1, row
        reached = max(reached, int(row[-1]))
    if reached < n + steps - 2:
        raise Failure(f"assisted generation with {says} appended {steps} tokens to a prompt of {n}, and its forwards "
                      f"turned positions up to {reached} where every token but the last is fed, up to {n + steps - 2}: "
                      f"the accepted drafts not counted", "draft-positions")


#: the steps assisted generation is asked for, doubled until each draft has been verified in two rounds or more (a
#: round's drafts all accepted yield drafts + 1 tokens: a counter advanced by one instead of by them shows only in
#: the round after)
ASSISTED_STEPS = (4, 8, 16, 32)


def _assisted(bind, e, row) -> str:
    """The model's assisted greedy generation of one row, with a draft always accepted and one nearly always rejected,
    against its greedy generation, token for token, over at least two verification rounds (a forward of the model
    that verifies more than one token after its prefill); what is not asked, as the note."""
    per_forward = len(bind.fresh(e).forward(row)[1])
    for steps in ASSISTED_STEPS:
        try:
            greedy = bind.fresh(e).generate(row, steps=steps)
        except Unsupported as u:
            return f"assisted generation: not asked ({u})"
        rounds = {}
        for draft, says in (("same", "a draft always accepted (a copy of the model)"),
                            ("other", "a draft nearly always rejected (the model drawn from another seed)")):
            try:
                got, seen = bind.fresh(e).generated(row, steps=steps, draft=draft)
            except Unsupported as u:
                return f"assisted generation: not asked ({u})"
            forwards = seen[::per_forward] if per_forward else []
            _verified_in_order(forwards, row.shape[1], got.shape[1], says)  # its positions first: a token follows
            if got.shape != greedy.shape or not np.array_equal(got, greedy):
                raise Failure(f"assisted generation with {says} appends {listed(got[0])} where greedy generation "
                              f"appends {listed(greedy[0])} ({steps} steps)", "unknown")
            rounds[draft] = sum(1 for p in forwards[1:] if np.ndim(p) >= 2 and p.shape[1] > 1)
        if min(rounds.values()) >= 2:
            return ""
    return (f"assisted generation: checked over {ASSISTED_STEPS[-1]} steps, in "
            f"{', '.join(f'{n} verification round(s) with the {d} draft' for d, n in rounds.items())}")
