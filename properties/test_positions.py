"""Spec section "positions": the position ids a multimodal builder gives text, image and video tokens
(:mod:`ropespec.spec.positions`).

Every property reads one rule of the builder's output and judges it against the builder's own other positions where
it can (a block's start is where the block says it starts; the resume rule compares with the largest position the
builder itself gave so far), so that one fault fails the property about it and no other. The exact rules need no
tolerance: positions are integers, and the one place a model computes in floating point (the clock of Qwen2.5-VL's
videos, in float32) allows the integer below a whole number of positions that float32 may round under. Sequences are
drawn as the model's prompts are: the text around every vision block at least the expectation's ``vision_framing``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure, Unsupported
from ropespec.implementations.families.positions import ONE_SEQUENCE
from ropespec.properties.framework import rope_property
from ropespec.spec import presets
from ropespec.spec import positions as rule

#: seconds per temporal grid step drawn: frame rates of 24, 25, 30 and 2 fps over a temporal patch of 2 frames, a
#: whole second, 1.5 s, and the 0.083 s at which a clock of 2 tokens per second never moves t (transformers #45381)
SECONDS = (1 / 12, 2 / 24, 2 / 25, 2 / 30, 0.25, 0.5, 2 / 3, 0.75, 1.0, 1.5, 2.0)


def _rules(impl):
    """The rules checked: the implementation's expectation, or every vision-language preset's that a factory takes
    (one model's builder declines the others' rules)."""
    if impl.expect is not None:
        return [impl.expect]
    every = [presets.get(n).replace(dtype=impl.dtype) for n in presets.position_rules()]
    taken = []
    for e in every:
        try:
            impl.bind(e)
        except Unsupported:
            continue
        except Failure:
            pass  # the properties report it, with its diagnosis
        taken.append(e)
    return taken or every


@st.composite
def _vision(draw, e):
    """An image (t = 1) or a video of 2 to 5 temporal steps (one frame, t = 1, under the frames rule), merged grids
    of 1 to 4 cells per side."""
    h, w = draw(st.integers(1, 4), label="h"), draw(st.integers(1, 4), label="w")
    if draw(st.booleans(), label="video"):
        t = 1 if e.params("position-ids").video_time == "frames" else draw(st.integers(2, 5), label="t")
        return ("video", (t, h, w), draw(st.sampled_from(SECONDS), label="seconds"))
    return ("image", (1, h, w))


@st.composite
def _sequence(draw, e, max_blocks: int = 3):
    """Text first (a prompt opens with its template's text), then vision blocks, and a text run or nothing last, the
    text around every block at least the expectation's framing (:func:`ropespec.spec.positions.framed`): up to 3
    tokens more than it asks before the first block, up to 2 more between two blocks and after the last, where a run
    is drawn whenever the framing asks for one."""
    before, after = e.params("position-ids").vision_framing
    first = max(1, before)
    out = [("text", draw(st.integers(first, first + 3), label="text"))]
    for _ in range(draw(st.integers(0, max_blocks), label="blocks")):
        if out[-1][0] != "text":
            n = draw(st.integers(after + before, after + before + 2), label="text")
            if n:  # no framing: blocks may stand side by side
                out.append(("text", n))
        out.append(draw(_vision(e)))
    if (after and out[-1][0] != "text") or draw(st.booleans(), label="tail"):
        last = max(1, after)
        out.append(("text", draw(st.integers(last, last + 2), label="text")))
    return out


def _pinned_sequences(e) -> list[list[tuple]]:
    """Two images of unequal sides after text; a video whose temporal extent passes its spatial one, then text; a
    clock of fractional seconds (frames: one frame per block after its timestamp); each framed as the expectation
    says."""
    images = [("text", 3), ("image", (1, 2, 3)), ("text", 2), ("image", (1, 3, 2)), ("text", 2)]
    if e.params("position-ids").video_time == "frames":
        seqs = [images, [("text", 2), ("video", (1, 2, 3), 1.0), ("text", 1), ("video", (1, 3, 2), 1.0), ("text", 2)]]
    else:
        seqs = [images, [("text", 2), ("video", (4, 2, 2), 1.0), ("text", 3)],
                [("text", 1), ("video", (4, 2, 3), 0.75), ("text", 1)]]
    return [_framed(e, s) for s in seqs]


def _framed(e, segments) -> list[tuple]:
    """A pinned sequence with its text lengthened to the expectation's framing (unchanged where it honours it)."""
    return rule.framed(segments, e.params("position-ids").vision_framing)


def _cases(impl):
    @st.composite
    def build(draw):
        e = draw(st.sampled_from(_rules(impl)), label="expect")
        return {"expect": e, "segments": draw(_sequence(e))}

    return build()


def _pinned(impl):
    return [{"expect": e, "segments": s} for e in _rules(impl) for s in _pinned_sequences(e)]


def _say(seg) -> str:
    if seg[0] == "text":
        return f"text of {seg[1]}"
    return f"{seg[0]} {tuple(seg[1])}" + (f" at {seg[2]:g} s per step" if seg[0] == "video" else "")


def _blocks(segments):
    """(index, first token, end token, segment) of each vision block."""
    return [(i, a, b, seg) for i, (kind, a, b, seg) in enumerate(rule.spans(segments)) if kind in ("image", "video")]


# -- text --------------------------------------------------------------------------------------------------------
@rope_property("position-ids.text",
               rule="exact: integers",
               cases=_cases,
               pinned=lambda impl: [{"expect": e, "segments": [("text", 7)]} for e in _rules(impl)] + _pinned(impl) + [
                   # a long prompt across the tile sizes: 1000 tokens of text around a 16 x 16 image
                   {"expect": e, "segments": _framed(e, [("text", 1000), ("image", (1, 16, 16)), ("text", 129)])}
                   for e in _rules(impl)])
def test_text_positions(bind, case):
    e, segs = case["expect"], case["segments"]
    got, _ = bind(e).build(segs)
    if len(segs) == 1:  # text only: 0 ... n - 1 on every axis
        n = segs[0][1]
        want = np.repeat(np.arange(n)[:, None], 3, axis=1)
        if not np.array_equal(got, want):
            d = got - want
            if np.all(d == d[0, 0]):
                raise Failure(f"a text-only sequence of {n} tokens starts at {got[0].tolist()}, not 0: every "
                              f"position is shifted by {int(d[0, 0])}", "position-offset")
            raise Failure(f"a text-only sequence of {n} tokens gets {got.tolist()}, expected 0 ... {n - 1} on every "
                          f"axis", "unknown")
        return 0.0
    for kind, a, b, seg in rule.spans(segs):
        if kind != "text":
            continue
        run = got[a:b]
        if not np.all(run == run[:, :1]):
            bad = int(np.argmax(~np.all(run == run[:, :1], axis=1)))
            raise Failure(f"text token {a + bad} ({_say(seg)}) has positions {run[bad].tolist()}: a text token has one "
                          f"position on every axis", "unknown")
        steps = np.diff(run[:, 0])
        if np.any(steps != 1):
            bad = int(np.argmax(steps != 1))
            raise Failure(f"text tokens {a + bad} and {a + bad + 1} ({_say(seg)}) are at {int(run[bad, 0])} and "
                          f"{int(run[bad + 1, 0])}: text steps by 1", "unknown")
    return 0.0


# -- vision blocks -----------------------------------------------------------------------------------------------
def _grid_of(got_block, grid):
    """The block's h and w offsets from its start, as (t, h, w) arrays, and the start (the smallest h)."""
    s = int(got_block[:, 1].min())
    t, h, w = grid
    return s, got_block.reshape(t, h, w, 3) - s


def _grid_holds(got_block, grid) -> bool:
    """Whether the block's h and w positions are its start plus the merged grid's row and column, row-major."""
    t, h, w = grid
    _, rel = _grid_of(got_block, grid)
    i, j = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return (np.array_equal(rel[..., 1], np.broadcast_to(i, (t, h, w)))
            and np.array_equal(rel[..., 2], np.broadcast_to(j, (t, h, w))))


@rope_property("position-ids.grid",
               rule="exact: integers",
               cases=_cases,
               pinned=_pinned)
def test_vision_grid(bind, case):
    e, segs = case["expect"], case["segments"]
    got, _ = bind(e).build(segs)
    for _, a, b, seg in _blocks(segs):
        t, h, w = seg[1]
        blk = got[a:b]
        if _grid_holds(blk, (t, h, w)):
            continue
        s, rel = _grid_of(blk, (t, h, w))
        i, j = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        says = f"the {_say(seg)} at tokens {a}-{b - 1}"
        if len(blk) > 1 and np.all(blk == blk[:, :1]) and np.all(np.diff(blk[:, 0]) == 1):
            raise Failure(f"{says} gets consecutive text positions {int(blk[0, 0])} ... {int(blk[-1, 0])} on every "
                          f"axis, not its {h} x {w} grid's", "vision-as-text")
        if np.array_equal(rel[..., 1], np.broadcast_to(j, (t, h, w))) and \
                np.array_equal(rel[..., 2], np.broadcast_to(i, (t, h, w))):
            raise Failure(f"{says}: each token's height offset is its column and its width offset its row: the h and "
                          f"w positions trade places", "axes-swapped")
        flat_i, flat_j = (np.arange(h * w) // h).reshape(h, w), (np.arange(h * w) % h).reshape(h, w)
        if h != w and np.array_equal(rel[..., 1], np.broadcast_to(flat_i, (t, h, w))) and \
                np.array_equal(rel[..., 2], np.broadcast_to(flat_j, (t, h, w))):
            raise Failure(f"{says}: its tokens walk a {w} x {h} grid (height {w}, width {h}), the merged grid is "
                          f"{h} x {w}: height and width are read in each other's place", "axes-swapped")
        extent = (int(rel[..., 1].max()) + 1, int(rel[..., 2].max()) + 1)
        raise Failure(f"{says} spans h x w = {extent[0]} x {extent[1]} from its start {s} (h offsets "
                      f"{rel[0, :, :, 1].tolist()}, w offsets {rel[0, :, :, 2].tolist()}), expected the merged grid "
                      f"{h} x {w}, row-major", "unknown")
    return 0.0


@rope_property("position-ids.time",
               rule="exact: integers; a clock in float32 may truncate to the integer below a whole number "
                    "(ropespec.spec.positions.time_options)",
               cases=_cases,
               pinned=_pinned)
def test_video_time(bind, case):
    e, segs = case["expect"], case["segments"]
    got, _ = bind(e).build(segs)
    blocks = _blocks(segs)
    for _, a, b, seg in sorted(blocks, key=lambda blk: blk[3][0] != "image"):  # still images first
        t, h, w = seg[1]
        blk = got[a:b]
        if not _grid_holds(blk, (t, h, w)):
            continue  # no grid, no start to measure time from: position-ids.grid judges the block
        s = int(blk[:, 1].min())
        times = blk.reshape(t, h * w, 3)[:, :, 0] - s
        says = f"the {_say(seg)} at tokens {a}-{b - 1} (starting at {s})"
        if seg[0] == "image" or e.params("position-ids").video_time == "frames":
            if np.all(times == 0):
                continue
            kind = "still image" if seg[0] == "image" else "frame"
            raise Failure(f"{says}: its temporal position is {int(blk[0, 0])}, not its start {s}: a {kind} is not "
                          f"scaled by the clock ({rule.TIME_RULES[e.params('position-ids').video_time]})",
                          "image-time-scaled" if int(blk[0, 0]) != s else "unknown")
        if not np.all(times == times[:, :1]):
            raise Failure(f"{says}: the tokens of one temporal step have different temporal positions "
                          f"{times.tolist()}", "unknown")
        steps = times[:, 0]
        ok = [int(v) in rule.time_options(k, seg[2], e.params("position-ids").video_time, e.params("position-ids").tokens_per_second) for k, v in enumerate(steps)]
        if all(ok):
            continue
        want = [rule.time_index(k, seg[2], e.params("position-ids").video_time, e.params("position-ids").tokens_per_second) for k in range(t)]
        if np.all(steps == 0) and any(want):
            raise Failure(f"{says}: every temporal step is at t = {s}, expected offsets {want} "
                          f"({rule.TIME_RULES[e.params('position-ids').video_time]}): the time axis is collapsed", "time-collapsed")
        truncated = [rule.time_index(k, int(seg[2]), e.params("position-ids").video_time, e.params("position-ids").tokens_per_second) for k in range(t)]
        if steps.tolist() == truncated:
            raise Failure(f"{says}: temporal offsets {steps.tolist()}, expected {want}: the seconds per step were "
                          f"truncated to {int(seg[2])} first ({rule.TIME_RULES[e.params('position-ids').video_time]})", "time-collapsed")
        raise Failure(f"{says}: temporal offsets {steps.tolist()}, expected {want} ({rule.TIME_RULES[e.params('position-ids').video_time]})",
                      "unknown")
    return 0.0


@rope_property("position-ids.resume",
               rule="exact: integers",
               cases=_cases,
               pinned=_pinned)
def test_resume(bind, case):
    e, segs = case["expect"], case["segments"]
    got, _ = bind(e).build(segs)
    spans = rule.spans(segs)
    for (_, _, _, prev), (kind, a, b, seg) in zip(spans, spans[1:]):
        start = int(got[a:b, 1].min()) if kind != "text" else int(got[a, 0])
        want = int(got[:a].max()) + 1
        if start != want:
            count = a
            what = ("the token count so far" if start == count else
                    "the block's start plus its spatial extent" if prev[0] != "text" and start == int(
                        got[a - rule.tokens(prev):a, 1].min()) + max(prev[1][1], prev[1][2]) else
                    "somewhere else")
            raise Failure(f"the {_say(seg)} after the {_say(prev)} starts at {start}, but the largest position so far "
                          f"is {want - 1} (on any axis): it resumes at {what}, not at {want}", "resume-offset")
    return 0.0


# -- batches and decoding ------------------------------------------------------------------------------------------
def _batch_cases(impl):
    @st.composite
    def build(draw):
        e = draw(st.sampled_from(_rules(impl)), label="expect")
        rows = [draw(_sequence(e, max_blocks=2)) for _ in range(draw(st.integers(2, 3), label="rows"))]
        return {"expect": e, "rows": rows}

    return build()


def _batch_pinned(impl):
    """A short text row beside a row with a vision block (the short one padded), and the other way round."""
    out = []
    for e in _rules(impl):
        seqs = _pinned_sequences(e)
        out.append({"expect": e, "rows": [[("text", 2)], seqs[1]]})
        out.append({"expect": e, "rows": [seqs[0], _framed(e, [("text", 1), ("image", (1, 2, 2)), ("text", 1)])]})
    return out


def _one_sequence(impl) -> str | None:
    """Why the batch properties are not about the builder: it builds one sequence at a time."""
    for e in _rules(impl):
        try:
            if not impl.bind(e).batched():
                return ONE_SEQUENCE
        except (Unsupported, Failure):
            continue
        return None
    return None


def _batched(bind, case):
    """The case's rows left-padded to one length n and built as one batch: (builder, rows, n, positions, next)."""
    e, rows = case["expect"], case["rows"]
    f = bind(e)
    n = max(rule.length(r) for r in rows)
    padded = [([("pad", n - rule.length(r))] if rule.length(r) < n else []) + list(r) for r in rows]
    got, nxt = f.batch(padded)
    return f, rows, n, got, nxt


@rope_property("position-ids.batch",
               rule="exact: integers",
               cases=_batch_cases,
               pinned=_batch_pinned,
               skip_if=_one_sequence)
def test_batch_rows(bind, case):
    f, rows, n, got, _ = _batched(bind, case)
    alone = [f.build(r)[0] for r in rows]
    for r, row in enumerate(rows):
        m = rule.length(row)
        mine = got[r, n - m:]
        if np.array_equal(mine, alone[r]):
            continue
        pads = n - m
        if pads and np.array_equal(mine, alone[r] + pads):
            raise Failure(f"row {r} ({m} tokens, {pads} pads on the left) is {pads} positions further on in the batch "
                          f"than alone: the pads are counted", "padding-shift")
        others = [q for q in range(len(rows)) if q != r and rule.length(rows[q]) == m and np.array_equal(mine, alone[q])]
        first = int(np.argmax(np.any(mine != alone[r], axis=1)))
        raise Failure(f"row {r}'s token {first} is at {mine[first].tolist()} in the batch, {alone[r][first].tolist()} "
                      f"alone" + (f": it has row {others[0]}'s positions" if others else
                                  ": a row's positions depend on the other rows"), "layout")
    return 0.0


@rope_property("position-ids.decode",
               rule="exact: integers",
               cases=_batch_cases,
               pinned=_batch_pinned,
               skip_if=_one_sequence)
def test_decode(bind, case):
    f, rows, n, got, nxt = _batched(bind, case)
    if nxt is None:
        raise NotImplementedError("the builder returns no next position (position_ids(rows) -> (positions, next))")
    for r, row in enumerate(rows):
        m = rule.length(row)
        want = int(got[r, n - m:].max()) + 1
        if np.all(nxt[r] == want):
            continue
        said = f"row {r} ({m} tokens, largest position {want - 1}) decodes on at {nxt[r].tolist()}, not {want}"
        cause = _decode_cause(f, row, m, n, want, nxt[r])
        raise Failure(said + cause, "decode-restart" if cause.startswith(":") else "unknown")
    return 0.0


def _decode_cause(f, row, m: int, n: int, want: int, nxt) -> str:
    """Why a row decodes on at ``nxt``, where the measurement tells (": <cause>"; anything else names no cause): the
    prompt's length or the padded length (a decode that restarts from the token count, its rope_deltas dropped), or
    one past the right position. A cause is said where it alone fits; where the case fits several (one pad before a one-token row: the padded length 2 is one
    past position 0 too), the row is built again behind more pads, where the padded length is another number, and
    the cause that fits both is said; else that they fit alike."""
    def causes(padded: int, at) -> dict[str, str]:
        values = {"prompt": (m, f"the prompt length {m}, the rope_deltas dropped"),
                  "padded": (padded, f"the padded length {padded}, the rope_deltas dropped"),
                  "late": (want + 1, "one past the right position")}
        return {key: what for key, (v, what) in values.items() if np.all(at == v)}

    first = causes(n, nxt)
    if len(first) <= 1:
        return "".join(f": {what}" for what in first.values())
    pads = n - m + 3
    _, again = f.batch([[("pad", pads)] + list(row)])
    there = causes(m + pads, again[0]) if again is not None else {}
    both = [key for key in first if key in there]
    if len(both) == 1:
        return f": {first[both[0]]} (behind {pads} pads it decodes on at {again[0].tolist()}: {there[both[0]]})"
    return (f" ({' and '.join(first.values())} alike; behind {pads} pads it decodes on at "
            f"{again[0].tolist() if again is not None else 'nothing'}: no cause is told apart)")
