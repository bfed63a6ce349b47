"""Spec section "layout": RoPE in the batched layouts (ropespec check --layout, --form vllm).

Every apply property runs on a layout's function too (its rows handed over as one sequence of one head); this
one draws what only a batched call can show: several batch rows with their own positions (left padding,
different offsets, rows equal to each other), several heads, grouped-query keys, packed sequences with
cu_seqlens, and inputs that are views (a fused qkv buffer, transposed or reversed storage, a broadcast head).
Every row of every head is checked as rope.conformance checks a row. A failure is named from evidence: the same
case on contiguous memory, the output's fit to a model of the fault, or a re-call that isolates it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from ropespec.implementations import arrays
from ropespec.implementations.contract import Failure, Fault
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import exact, output_bound
from ropespec.properties.cases import (TILE_HEADS, TILE_KV_HEADS, expect_strategy, listed, long_expects, long_positions,
                              pinned_expects)
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import make_vectors, pinned_rows, position_rows, position_vectors, positions, vectors
from ropespec.spec import layouts
from ropespec.spec.definitions import token_positions


def _about(impl):
    if impl.shape.laid_out.plain:
        return "an invariant of the batched layouts (--layout bshd, bhsd, sbhd, thd or --form vllm)"
    return None


def _applies(impl):
    if not arrays.STORAGES.get(impl.array):
        return f"the batched layouts take numpy arrays, torch or jax tensors, not {impl.array}"
    if impl.shape.laid_out.packed and impl.multi_axis == "fixed":
        return "the thd layout packs sequences of 1-D positions (one offset each); a multi-axis RoPE is not packed so"
    return None


def _tail(e) -> tuple[int, ...]:
    """The trailing axis of a position: () for 1-D RoPE, (A,) for a multi-axis RoPE's vectors."""
    return (e.n_axes,) if e.multi_axis else ()


def _cases(impl):
    layout = impl.shape.rows
    storages = _storages(impl)

    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl), label="expect")
        top = e.max_position
        case = {"expect": e, "layout": layout, "storage": draw(st.sampled_from(storages), label="storage")}
        if layouts.get(layout).packed and e.multi_axis:
            reject()  # packed sequences carry 1-D offsets
        if layouts.get(layout).packed:
            most = min(4, top)
            lengths = draw(st.lists(st.integers(1, most), min_size=1, max_size=3), label="sequence lengths")
            offsets = draw(st.lists(positions(max_value=top - most + 1), min_size=len(lengths), max_size=len(lengths)),
                           label="offsets")
            cu = np.cumsum([0, *lengths])
            case["cu_seqlens"] = cu
            if impl.shape.positions == "per-token":  # packed position_ids: consecutive per sequence, or any
                run = token_positions(np.array(offsets, dtype=np.int64), cu)
                case["token_positions"] = run if draw(st.booleans(), label="consecutive") else np.array(
                    draw(st.lists(positions(max_value=top), min_size=len(run), max_size=len(run)), label="positions"),
                    dtype=np.int64)
            else:
                case["offsets"] = np.array(offsets, dtype=np.int64)
            shape = (sum(lengths), draw(st.integers(1, 3), label="heads"))
        elif layouts.get(layout).keys_apart:
            t, kv = draw(st.integers(1, 6), label="tokens"), draw(st.integers(1, 2), label="h_kv")
            shape = (t, kv * draw(st.integers(1, 3), label="group"))
            case["positions"] = draw(position_rows(e, t, max_value=top), label="positions")
            case["key"] = draw(vectors(e, t * kv), label="key").reshape(t, kv, e.head_dim)
        else:
            b, s_ = draw(st.integers(1, 3), label="batch"), draw(st.integers(1, min(4, top)), label="seq")
            rows: list = []
            for i in range(b):  # left-padded / decode rows (an offset, then consecutive), equal rows, any positions
                how = draw(st.sampled_from(("offset", "same", "drawn") if i else ("offset", "drawn")), label="row")
                if how == "offset":  # consecutive from an offset (on every axis, for a multi-axis RoPE)
                    start = draw(position_vectors(e, max_value=top - s_ + 1), label="offset")
                    rows.append(np.add.outer(np.arange(s_), start) if e.multi_axis else start + np.arange(s_))
                elif how == "same":
                    rows.append(rows[0])
                else:
                    rows.append(draw(position_rows(e, s_, max_value=top), label="positions"))
            case["positions"] = np.array(rows, dtype=np.int64)
            shape = (b, s_, draw(st.integers(1, 3), label="heads"))
        x = draw(vectors(e, int(np.prod(shape))), label="x").reshape(*shape, e.head_dim)
        if case["storage"] == "broadcast":  # one head's values at every head (zero strides)
            x = np.broadcast_to(x[..., :1, :], x.shape).copy()
        case["x"] = x
        return case

    return build()


def _storages(impl) -> tuple[str, ...]:
    """The storages a layout's case may use: read-only memory is no place to write; flattened heads (vllm) cannot
    repeat a head by strides."""
    layout = impl.shape.rows
    return tuple(s for s in arrays.STORAGES.get(impl.array, ("contiguous",))
                 if not (s == "broadcast" and (impl.shape.inplace or layouts.get(layout).keys_apart)))


def _pinned(impl):
    """One case per storage at each pinned expectation: two batch rows (or tokens, or packed sequences) at 0, 1 and
    max_position - 1, two heads, so that every storage is tried whatever the draws."""
    layout, out = impl.shape.rows, []
    for e in pinned_expects(impl):
        if layouts.get(layout).packed and e.multi_axis:
            continue
        top = e.max_position - 1
        for storage in _storages(impl):
            case = {"expect": e, "layout": layout, "storage": storage}
            if layouts.get(layout).packed:
                case["cu_seqlens"] = np.array([0, 2, 3])
                if impl.shape.positions == "per-token":
                    case["token_positions"] = np.array([5, 1, max(0, top - 1)], dtype=np.int64)
                else:
                    case["offsets"] = np.array([0, max(0, top - 1)], dtype=np.int64)
                shape = (3, 2)
            elif layouts.get(layout).keys_apart:
                case["positions"] = pinned_rows(e, [0, 1, top])
                case["key"] = make_vectors(e, 3, seed=2).reshape(3, 1, e.head_dim)
                shape = (3, 2)
            else:
                case["positions"] = np.stack([pinned_rows(e, [0, 1]), pinned_rows(e, [top, max(0, top - 1)])])
                shape = (2, 2, 2)
            x = make_vectors(e, int(np.prod(shape))).reshape(*shape, e.head_dim)
            case["x"] = np.broadcast_to(x[..., :1, :], x.shape).copy() if storage == "broadcast" else x
            out.append(case)
    return out + _long_pinned(impl)


def _long_pinned(impl):
    """A call as long as a prefill's in the layout, across the tile sizes kernels use: sequences of 127 and 130 tokens
    (packed), two batch rows of 129, or 257 tokens, each with TILE_HEADS heads (TILE_KV_HEADS of keys for vllm), some
    2300 rows; contiguous storage, the storages being the short cases' subject. (rope.conformance's long calls reach
    4097 rows.)"""
    layout, out = impl.shape.rows, []
    for e in long_expects(impl):
        if layouts.get(layout).packed and e.multi_axis:
            continue
        m = e.max_position
        case = {"expect": e, "layout": layout, "storage": "contiguous"}
        if layouts.get(layout).packed:
            lengths = [min(n, m) for n in (127, 130)]  # a packed sequence's positions run on from its offset
            case["cu_seqlens"] = np.cumsum([0, *lengths])
            offsets = np.array([0, m - lengths[1]], dtype=np.int64)
            if impl.shape.positions == "per-token":
                case["token_positions"] = token_positions(offsets, case["cu_seqlens"])
            else:
                case["offsets"] = offsets
            shape = (sum(lengths), TILE_HEADS)
        elif layouts.get(layout).keys_apart:
            case["positions"] = long_positions(e, 257)
            case["key"] = make_vectors(e, 257 * TILE_KV_HEADS, seed=3).reshape(257, TILE_KV_HEADS, e.head_dim)
            shape = (257, TILE_HEADS)
        else:
            case["positions"] = np.stack([long_positions(e, 129), long_positions(e, 129, start=m - 64)])
            shape = (2, 129, TILE_HEADS)
        case["x"] = make_vectors(e, int(np.prod(shape)), seed=1).reshape(*shape, e.head_dim)
        out.append(case)
    return out


def _per_element(case: dict) -> np.ndarray:
    """The position of every row of every head: canonical x's shape without the last axis (and a multi-axis RoPE's
    position vectors along a last one)."""
    x, tail = case["x"], _tail(case["expect"])
    if layouts.get(case["layout"]).packed:
        per_token = case["token_positions"] if "token_positions" in case else \
            token_positions(case["offsets"], case["cu_seqlens"])
        return np.broadcast_to(per_token[:, None], x.shape[:-1])
    if layouts.get(case["layout"]).keys_apart:
        return np.broadcast_to(case["positions"][:, None], x.shape[:-1] + tail)
    return np.broadcast_to(case["positions"][:, :, None], x.shape[:-1] + tail)


def _call(f, case: dict) -> dict:
    pos = next(case[k] for k in ("offsets", "token_positions", "positions") if k in case)
    return f.layout(case["x"], pos, case.get("cu_seqlens"), case["storage"], case.get("key"))


def _compare(e, case: dict, got: dict, element_positions: np.ndarray):
    """(rows got, reference, bound) of every row of every head, q's then k's for vllm, each row at its position in
    ``element_positions`` (the case's, or a fault model's)."""
    d = e.head_dim
    tail = _tail(e)
    rows = [case["x"].reshape(-1, d)]
    pos = [element_positions.reshape((-1,) + tail)]
    out = [got["out"].reshape(-1, d)]
    if case.get("key") is not None:
        kv_pos = np.broadcast_to(case["positions"][:, None], case["key"].shape[:-1] + tail)
        rows.append(case["key"].reshape(-1, d))
        pos.append(kv_pos.reshape((-1,) + tail))
        out.append(got["key"].reshape(-1, d))
    rows, pos, out = np.concatenate(rows), np.concatenate(pos), np.concatenate(out)
    ref, own = exact(e, rows, pos)
    return out, ref, output_bound(e, rows, pos) + own


def _fits(e, case, got, element_positions) -> bool:
    out, ref, bound = _compare(e, case, got, element_positions)
    return bool(np.all(np.abs(out - ref) <= bound))


@rope_property("rope.layout",
               rule=("as rope.conformance, for every row of every head of the call (and of k for vllm)"),
               cases=_cases, pinned=_pinned, skip_if=_applies, not_about=_about)
def test_layout(bind, case):
    e, storage = case["expect"], case["storage"]
    f, layout = bind(e), case["layout"]
    where = _where(case)
    try:
        got = _call(f, case)
    except Fault as err:
        word, evidence = _name(f, e, case, None, err)
        if word is None:
            raise
        raise err.named(word, evidence, call=where) from None
    if got["outside"]:
        raise Failure(f"{got['outside']} [{where}]", "input-mutated")
    if got["mutated"]:
        hint = " (a function that writes its result there is declared --inplace)" if got["mutated"] in (
            "x", "query", "key") else ""
        raise Failure(f"{got['mutated']} after the call differs from {got['mutated']} before it: the function wrote "
                      f"into its argument{hint} [{where}]{_when_mutated(f, e, case)}", "input-mutated")
    out, ref, bound = _compare(e, case, got, _per_element(case))
    order = "token, head" if layouts.get(layout).by_token else "batch, seq, head"
    try:
        return assert_close("f(x, p)", out, ref, bound, call=where, dtype=e.dtype,
                            index_names=(f"row ({order}{'; keys after queries' * (layouts.get(layout).keys_apart)})", "dim"))
    except Failure as err:
        word, evidence = _name(f, e, case, got, err)
        raise (err.named(word, evidence) if word else err) from None


#: the call shapes (batch, seq, heads) tried when a call wrote into its argument: the degenerate axes that make a
#: transposed view contiguous (one token, one head) and a call with none
_SHAPES = ((1, 1, 1), (1, 3, 1), (1, 1, 2), (2, 3, 2))


def _when_mutated(f, e, case: dict) -> str:
    """Which call shapes wrote into their argument, where only some did: unsloth's kernel writes Q in place exactly
    when Q.transpose(1, 2) is already contiguous (one head, or one token); '' when all or none did."""
    layout = case["layout"]
    if layouts.get(layout).by_token or e.multi_axis:
        return ""
    wrote, kept = [], []
    for b, s_, h in _SHAPES:
        pos = np.stack([np.arange(1, s_ + 1) + 3 * i for i in range(b)]).astype(np.int64) % e.max_position  # not 0
        one = {"expect": e, "layout": layout, "storage": "contiguous", "positions": pos,
               "x": make_vectors(e, b * s_ * h, seed=b + s_ + h).reshape(b, s_, h, e.head_dim)}
        try:
            got = _call(f, one)
        except Fault:
            return ""
        (wrote if got["mutated"] else kept).append(f"(batch {b}, seq {s_}, heads {h})")
    if not wrote or not kept:
        return ""
    return (f"; only some shapes wrote into it: {', '.join(wrote)} did, {', '.join(kept)} did not (a view of x that "
            f"is contiguous at those shapes written in place)")


def _where(case: dict) -> str:
    layout = case["layout"]
    shape = "x" + str(tuple(case["x"].shape))
    if layouts.get(layout).packed:
        what = (f"positions={listed(case['token_positions'])} (one per token)" if "token_positions" in case else
                f"offsets={listed(case['offsets'])}") + f", cu_seqlens={listed(case['cu_seqlens'])}"
    elif layouts.get(layout).keys_apart:
        what = f"positions={listed(case['positions'])}, key{tuple(case['key'].shape)} (tokens, h_kv, dim)"
    else:
        what = f"positions={listed(case['positions'])}"
    return f"{layout} layout, {shape} in canonical axes, {what}, {case['storage']} storage"


def _name(f, e, case: dict, got: dict | None, err: Failure) -> tuple[str | None, str]:
    """The layout fault whose evidence fits: (word, evidence), or (None, "")."""
    storage, layout = case["storage"], case["layout"]
    if got is not None:
        misread = _misread(e, case, got)
        if misread:
            return "layout", misread
        found = _tile(f, e, case, got)
        if found:
            return "tile-boundary", found
    if storage != "contiguous":  # the same case on contiguous memory
        try:
            plain = _call(f, dict(case, storage="contiguous"))
            right = not plain["outside"] and not plain["mutated"] and _fits(e, case, plain, _per_element(case))
        except Fault:
            right = False
        if right:
            width = ""
            if storage == "fused" and isinstance(err, Fault) and err.diagnosis == "shape":
                width = "; the shape it returned is the fused buffer's, not the view's: it reads the buffer's whole width"
            return "layout", (f"the same call on contiguous memory is right: on {storage} storage it is not, so it "
                              f"assumes contiguous memory (reads x by its shape, not its strides){width}")
    if got is not None:
        pos = case.get("positions")
        if layouts.get(layout).batched and len(pos) > 1 and \
                _fits(e, case, got, np.broadcast_to(pos[:1, :, None], case["x"].shape[:-1] + _tail(e))):
            return "layout", ("every batch row is rotated by batch row 0's positions: the positions of the other rows "
                              "(left padding, other offsets) are ignored")
        if layouts.get(layout).batched and len(pos) > 1:
            flat = pos.reshape((-1,) + _tail(e))
            at_b = flat[np.arange(pos.shape[0])]  # table row b, the batch index read as the token's
            if _fits(e, case, got, np.broadcast_to(at_b[:, None, None], case["x"].shape[:-1] + _tail(e))):
                return "layout", ("every token of batch row b is rotated by the position of flattened row b: the table "
                                  "row is read at the batch index instead of the token's (b * seq + t)")
        if layouts.get(layout).packed and "token_positions" in case:
            cu = case["cu_seqlens"]
            as_offsets = token_positions(case["token_positions"][: len(cu) - 1], cu)
            if _fits(e, case, got, np.broadcast_to(as_offsets[:, None], case["x"].shape[:-1])):
                return "layout", ("the first positions are read as one offset per sequence: given one position per "
                                  "token (--positions per-token), it reads them per sequence (check it without "
                                  "--positions per-token if that is its contract)")
    if layouts.get(layout).packed and "offsets" in case and len(case["offsets"]) < len(case["x"]):
        per_token = dict(case, token_positions=token_positions(case["offsets"], case["cu_seqlens"]))
        per_token.pop("offsets")
        try:
            again = _call(f, per_token)
            right = not again["outside"] and not again["mutated"] and _fits(e, per_token, again, _per_element(per_token))
        except Fault:
            right = False
        if right:
            return "layout", ("it reads one position per token: handed each token's position instead of one offset per "
                              "sequence it is right (check it with --positions per-token if that is its contract)")
    if layouts.get(layout).batched and e.max_position >= 8:
        return _head_axis(f, e, layout)
    if layouts.get(layout).keys_apart and case["key"].shape[1] != case["x"].shape[1]:
        same = dict(case, key=case["x"].copy(), storage="contiguous")  # k with q's head count
        try:
            again = _call(f, same)
            right = _fits(e, same, again, _per_element(same))
        except Fault:
            right = False
        if right:
            return "layout", (f"with as many key heads as query heads ({case['x'].shape[1]}) it is right; with "
                              f"h_kv = {case['key'].shape[1]} it is not: k is read with q's head count")
    return None, ""


def _misread(e, case: dict, got: dict) -> str | None:
    """The evidence that a packed call's sequences take positions from the wrong place, where the output fits it
    exactly: running on across the sequence boundaries from the first offset, every sequence from sequence 0's
    offset (Megatron's and TransformerEngine's packed-sequence bug), or every sequence restarting at 0. Before the
    tile rule: such a call is right alone and wrong past its first sequence, as a tile's fault is."""
    if not layouts.get(case["layout"]).packed or "offsets" not in case or len(case["offsets"]) < 2:
        return None
    offsets, cu, shape = case["offsets"], case["cu_seqlens"], case["x"].shape[:-1]
    models = {"run on across the sequence boundaries, from the first offset: cu_seqlens (and the other sequences' "
              "offsets) are ignored": offsets[0] + np.arange(len(case["x"])),
              "of every sequence start at sequence 0's offset: the other sequences' offsets are ignored (each "
              "sequence is rotated as sequence 0 would be)": token_positions(np.full_like(offsets, offsets[0]), cu),
              "restart at 0 in every sequence: the offsets are ignored": token_positions(np.zeros_like(offsets), cu)}
    for said, per_token in models.items():
        if np.array_equal(per_token, token_positions(offsets, cu)):
            continue
        if per_token.max() < e.max_position and _fits(e, case, got, np.broadcast_to(per_token[:, None], shape)):
            return "positions " + said
    return None


def _alone(case: dict, i: int) -> dict:
    """The row at flat index ``i`` of the case's x (canonical axes) as a call of its own: one token of one head, at
    its own position (its key head with it for vllm)."""
    x, layout = case["x"], case["layout"]
    at = np.unravel_index(i, x.shape[:-1])
    one = {k: v for k, v in case.items() if k not in ("x", "positions", "offsets", "token_positions", "cu_seqlens",
                                                      "key")}
    one["x"] = x[at][(None,) * (x.ndim - 1)].copy()
    if layouts.get(layout).packed:
        p = _per_element(case)[at]
        one["cu_seqlens"] = np.array([0, 1])
        one["token_positions" if "token_positions" in case else "offsets"] = np.array([p], dtype=np.int64)
    elif layouts.get(layout).keys_apart:
        t, h = at
        group = x.shape[1] // case["key"].shape[1]
        one["positions"] = case["positions"][t:t + 1]
        one["key"] = case["key"][t:t + 1, h // group:h // group + 1].copy()
    else:
        b, s_ = at[0], at[1]
        one["positions"] = case["positions"][b:b + 1, s_:s_ + 1]
    return one


def _tile(f, e, case: dict, got: dict) -> str | None:
    """The evidence that a long call's wrong rows are wrong because of where they sit in it (a kernel's tiles, or the
    mask of its last tile): rows right before the first wrong one, and the first wrong rows right in calls of their
    own. Only of calls longer than a tile (more than 8 heads or 64 tokens)."""
    x = case["x"]
    heads, tokens = x.shape[-2], int(np.prod(x.shape[:-2]))
    if heads <= 8 and tokens <= 64:
        return None
    out, ref, bound = _compare(e, case, got, _per_element(case))
    n = int(np.prod(x.shape[:-1]))  # q's rows (vllm's keys come after them)
    bad = np.flatnonzero((~(np.abs(out[:n] - ref[:n]) <= bound[:n])).any(axis=1))
    if bad.size == 0 or bad[0] == 0:
        return None
    for i in bad[:4]:
        one = _alone(case, int(i))
        try:
            again = _call(f, one)
        except Fault:
            return None
        if again["outside"] or again["mutated"] or not _fits(e, one, again, _per_element(one)):
            return None
    where = np.array(np.unravel_index(bad, x.shape[:-1]))  # each bad row's index on each canonical axis
    axes = ("token", "head") if layouts.get(case["layout"]).by_token else ("batch row", "token", "head")
    said = [f"every {name} from {int(where[k].min())} on" for k, name in enumerate(axes)
            if where[k].min() > 0 and name != "batch row"]
    return (f"{bad.size} of {n} rows are wrong, the first at {dict(zip(axes, where[:, 0].tolist()))}, and each of the "
            f"first wrong ones is right in a call of its own (one token of one head): the call's size decides "
            f"({' and '.join(said) or 'rows past a point of the call'} is wrong in a call of {tokens} tokens and "
            f"{heads} heads)")


def _head_axis(f, e, layout: str) -> tuple[str | None, str]:
    """A re-call with as many heads as tokens and batch rows (2 each, the rows at other offsets), contiguous: an
    output rotated by the positions read along the head axis is named (seq and head axes swapped, or cos/sin
    broadcast along the wrong axis), as is one rotated by batch row 0's positions or with batch and seq swapped."""
    pos = np.array([[1, 2], [5, 6]], dtype=np.int64)
    if e.multi_axis:  # each token's axes apart from each other and from every other token's
        pos = np.add.outer(pos, 10 * np.arange(e.n_axes)) % e.max_position
    case = {"expect": e, "layout": layout, "positions": pos, "storage": "contiguous",
            "x": make_vectors(e, 8, seed=1).reshape(2, 2, 2, e.head_dim)}
    full = (2, 2, 2) + _tail(e)
    try:
        got = _call(f, case)
    except Fault:
        return None, ""
    if got["outside"] or got["mutated"] or _fits(e, case, got, _per_element(case)):
        return None, ""
    if _fits(e, case, got, np.broadcast_to(pos[:, None, :], full)):  # element (b, s, h) at position P[b, h]
        return "layout", ("with 2 tokens and 2 heads per batch row, every head h of token s is rotated by the position "
                          "of token h: positions are read along the head axis (seq and head axes swapped, or cos/sin "
                          "broadcast along the wrong axis)")
    if _fits(e, case, got, np.broadcast_to(pos[:1, :, None], full)):
        return "layout", "every batch row is rotated by batch row 0's positions: the other rows' positions are ignored"
    if _fits(e, case, got, np.broadcast_to(np.swapaxes(pos, 0, 1)[:, :, None], full)):  # (b, s, h) at P[s, b]
        return "layout", ("with 2 batch rows of 2 tokens, token s of batch row b is rotated by the position of token b "
                          "of batch row s: the batch and seq axes are swapped")
    return None, ""
