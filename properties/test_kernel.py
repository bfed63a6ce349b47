"""Spec section "kernel": an apply kernel, kernel(x, cos, sin), checked on its own (ropespec check --form kernel).

The table comes from ropespec, exactly rounded to the output dtype, so nothing of the angle or of the
frequencies enters: the kernel's arithmetic, convention, sign and strides are checked to the rotation's own
bound, K_ROT u of the pair norm, at angles drawn from every position. A kernel that fails is named from
evidence: the same output with sin negated (direction), with another convention's pairs (convention), or
with the table read at the wrong index (layout).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure, Fault
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import pair_norms, per_dim
from ropespec.properties.cases import (TILE_HEADS, TILE_KV_HEADS, decoding_case, expect_strategy, listed,
                              long_expects, long_positions, pinned_expects, pinned_rows_of, tile_evidence)
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import make_vectors, position_rows, vectors
from ropespec.spec import tolerance
from ropespec.reference.table import rotated
from ropespec.spec.angles import rounded_table as table
from ropespec.spec.expectation import CONVENTIONS


def _cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=None), label="expect")
        n = draw(st.integers(1, 8), label="n")
        pos = draw(position_rows(e, n, max_value=e.max_position), label="positions")
        return {"expect": e, "positions": pos, "x": draw(vectors(e, n), label="x")}

    return build()


def _pinned(impl):
    out = []
    for e in pinned_expects(impl):
        pos = pinned_rows_of(impl, e)
        out.append({"expect": e, "positions": pos, "x": make_vectors(e, len(pos))})
    return out + [{"expect": e, "positions": long_positions(e, n), "x": make_vectors(e, n, seed=n)}
                  for e in long_expects(impl) for n in (129, 1000)]  # long calls, across the tile sizes


@rope_property("kernel.rotation",
               rule=("strict_bound: K_ROT u_out of the pair norm, at every angle (the table is given, exactly "
                      "rounded, so no angle error enters); the reference rotation is formed in double-double; "
                      "pass-through dims exact"),
               cases=_cases, pinned=_pinned)
def test_rotation(bind, case):
    e, pos, x = case["expect"], case["positions"], case["x"]
    c, s = table(e, pos)
    call = bind(e).kernel(x, c, s)
    if call.input_mutated:
        raise Fault(f"kernel(x, cos, sin) wrote into its argument {call.input_mutated} (a kernel that writes its "
                    f"result into x is declared in place, with --inplace)", "input-mutated")
    want = rotated(e, x, c, s)
    bound = per_dim(e, tolerance.strict_bound(e, pair_norms(e, x)))  # pass-through dims: 0, exact
    try:
        return assert_close("kernel(x, cos, sin)", call.out, want, bound, call=f"{len(x)} rows, angles of positions "
                            f"{listed(pos)}", dtype=e.dtype, index_names=("row", "dim"))
    except Failure as err:
        word, evidence = _name(e, x, c, s, call.out, bound)
        if word is None:
            bad = np.flatnonzero((~(np.abs(call.out - want) <= bound)).any(axis=1))
            tile = tile_evidence(bad, lambda i: bool(np.all(np.abs(bind(e).kernel(x[i:i + 1], c[i:i + 1], s[i:i + 1])
                                                                     .out - want[i]) <= bound[i])))
            word, evidence = ("tile-boundary", tile) if tile else (None, "")
        raise err.named(word or "not-a-rotation", evidence or None) from None


def _name(e, x, c, s, got, bound) -> tuple[str | None, str]:
    """The fault whose model reproduces the output within the bound: sin negated, another convention's pairs,
    or the per-pair table read at index 2i (per-dim indexing) or a per-dim table read at i."""
    # a model's own pairs may not be the expected ones: its rounding is bounded by the row's norm, not a pair's
    loose = np.maximum(bound, tolerance.strict_bound(e, tolerance.convention_free_norm(x)))  # (n, d) with (n, 1)

    def fits(y):
        return np.all(np.abs(got - y) <= loose)

    if fits(rotated(e, x, c, s, sign=-1.0)):
        return "direction", "the output is the rotation with sin negated: it turns by -p theta_i"
    for other in CONVENTIONS:
        if other != e.convention and fits(rotated(e, x, c, s, pairs=e.replace(convention=other).pair_index())):
            return "convention", f"the output is the rotation of {other} pairs, not {e.convention}"
    k = e.n_pairs
    at_2i = (2 * np.arange(k)) % k  # a per-dim index (2i, interleaved) into a table of one value per pair
    if k > 1 and fits(rotated(e, x, c[:, at_2i], s[:, at_2i])):
        return "layout", ("pair i is turned by the table's entry 2i mod r/2: the kernel indexes one value per dim in "
                          "a table of one per pair")
    return None, ""


def _qk_cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=None), label="expect")
        # head counts and batch sizes are call shapes, not part of what the function computes: drawn for plain
        # functions and factories alike (grouped-query when h_q > h_kv), unless the expectation fixes them
        if e.n_heads == 1:
            kv = draw(st.integers(1, 2), label="h_kv")
            h_q, h_kv = kv * draw(st.integers(1, 3), label="group"), kv
        else:
            h_q, h_kv = e.n_heads, e.n_kv_heads
        b, s_ = draw(st.integers(1, 2), label="batch"), draw(st.integers(1, 4), label="seq")
        # positions per batch row: rows with different offsets (left padding, decode) and equal rows
        pos = draw(position_rows(e, b * s_, max_value=e.max_position), label="positions")
        return {"expect": e, "positions": pos.reshape((b, s_) + pos.shape[1:]),
                "q": draw(vectors(e, b * h_q * s_), label="q").reshape(b, h_q, s_, e.head_dim),
                "k": draw(vectors(e, b * h_kv * s_), label="k").reshape(b, h_kv, s_, e.head_dim)}

    return build()


def _qk_long(impl) -> list[dict]:
    """A prefill's call: 2 batch rows of 129 tokens, TILE_HEADS query heads over TILE_KV_HEADS key heads."""
    out = []
    for e in long_expects(impl):
        h_q, h_kv = (TILE_HEADS, TILE_KV_HEADS) if e.n_heads == 1 else (e.n_heads, e.n_kv_heads)
        pos = np.stack([long_positions(e, 129), long_positions(e, 129, start=e.max_position - 64)])
        out.append({"expect": e, "positions": pos,
                    "q": make_vectors(e, 2 * h_q * 129, seed=5).reshape(2, h_q, 129, e.head_dim),
                    "k": make_vectors(e, 2 * h_kv * 129, seed=6).reshape(2, h_kv, 129, e.head_dim)})
    return out


def _rows(e, x, c, s):
    """q or k (batch, heads, seq, head_dim) as rows in (batch, head, seq) order, each row's table (c, s of (batch,
    seq, r/2) broadcast over the heads) and its bound."""
    b, h, s_ = x.shape[:3]
    rows = x.reshape(-1, e.head_dim)
    cr, sr = (np.broadcast_to(t[:, None], (b, h, s_, t.shape[-1])).reshape(len(rows), -1) for t in (c, s))
    return rows, cr, sr, per_dim(e, tolerance.strict_bound(e, pair_norms(e, rows)))


@rope_property("kernel.qk",
               rule=("as kernel.rotation, for every row of q and of k"),
               cases=_qk_cases, pinned=lambda impl: [decoding_case(e) for e in pinned_expects(impl)] + _qk_long(impl))
def test_qk(bind, case):
    e, pos = case["expect"], case["positions"]
    b, s_ = pos.shape[:2]
    c, s = table(e, pos.reshape((b * s_,) + pos.shape[2:]))
    c, s = c.reshape(b, s_, -1), s.reshape(b, s_, -1)
    f = bind(e)
    q_out, k_out = f.qk(case["q"], case["k"], c, s)
    says = f.host.shape.declared.ops["qk"].says  # transformers' apply(q, k, cos, sin), or the complex form's call
    worst = 0.0
    for name, x, got in (("q_embed", case["q"], q_out), ("k_embed", case["k"], k_out)):
        h = x.shape[1]
        rows, cr, sr, bound = _rows(e, x, c, s)
        want = rotated(e, rows, cr, sr)
        got = np.asarray(got).reshape(len(rows), -1)
        try:
            worst = max(worst, assert_close(name, got, want, bound, call=f"{says}, batch {b}, heads "
                                            f"{case['q'].shape[1]}/{case['k'].shape[1]}, positions {listed(pos)}", dtype=e.dtype,
                                            index_names=("row (batch, head, seq)", "dim")))
        except Failure as err:
            word, evidence = _name(e, rows, cr, sr, got, bound)
            if word == "direction" and _one_sided(e, case, c, s, q_out, k_out):
                other = "k_embed" if name == "q_embed" else "q_embed"
                evidence = (f"{name} turns by -p theta_i while {other} turns by +p theta_i: the direction is flipped "
                            f"on one of q and k only, so the scores q . k depend on m + n, not m - n")
            c0, s0 = (np.broadcast_to(t[:1, None], (b, h, s_, t.shape[-1])).reshape(len(rows), -1) for t in (c, s))
            if word is None and b > 1 and np.all(np.abs(got - rotated(e, rows, c0, s0)) <= bound):
                word, evidence = "layout", (f"every batch row of {name} is rotated by batch row 0's table: the positions "
                                            f"of the other rows (left padding, other offsets) are ignored")
            if word is None and h > 1:
                word, evidence = _unrotated_heads(name, rows, got, want, bound, (b, h, s_))
            if word is None and s_ == 1 and b > 1:
                word, evidence = _seq_of_one(bind(e), e, case, c, s)
            raise err.named(word or "not-a-rotation", evidence or None) from None
    return worst


def _one_sided(e, case, c, s, q_out, k_out) -> bool:
    """One of q and k turns the expected way and the other the opposite way (a reverse rotate_half kept for one)."""
    ways = []
    for x, got in ((case["q"], q_out), (case["k"], k_out)):
        rows, cr, sr, bound = _rows(e, x, c, s)
        got = np.asarray(got).reshape(len(rows), -1)
        ways.append(next((sign for sign in (1.0, -1.0)
                          if np.all(np.abs(got - rotated(e, rows, cr, sr, sign=sign)) <= bound)), None))
    return set(ways) == {1.0, -1.0}


def _seq_of_one(f, e, case, c, s) -> tuple[str | None, str]:
    """Wrong with one token per batch row and right with the same rows twice (seq 2): the function reads a row stride
    off the seq axis, whose stride means nothing at length 1."""
    q, k = (np.concatenate([case[n], case[n]], axis=2) for n in ("q", "k"))
    c2, s2 = np.concatenate([c, c], axis=1), np.concatenate([s, s], axis=1)
    try:
        q_out, k_out = f.qk(q, k, c2, s2)
    except Fault:
        return None, ""
    for x, got in ((q, q_out), (k, k_out)):
        rows, cr, sr, bound = _rows(e, x, c2, s2)
        if not np.all(np.abs(np.asarray(got).reshape(len(rows), -1) - rotated(e, rows, cr, sr)) <= bound):
            return None, ""
    return "layout", ("with one token per batch row (seq 1) rows come out wrong, and with each "
                      "token twice (seq 2) every row is right: it takes a row stride from the seq axis, whose stride "
                      "means nothing at length 1 (contiguous q (b, h, 1, d) seen as (b, 1, h, d) reports stride(1) = d)")


def _unrotated_heads(name: str, rows, got, want, bound, shape) -> tuple[str | None, str]:
    """Some heads right, the others returned as they came in: the function handles fewer heads than it is given
    (one key head, as code written for h_kv = 1 does)."""
    b, h, s_ = shape
    per_head = lambda a: a.reshape(b, h, s_, -1).transpose(1, 0, 2, 3).reshape(h, -1)  # noqa: E731
    right = np.all(per_head(np.abs(got - want) <= bound), axis=1)
    untouched = np.all(per_head(got == rows), axis=1) & ~right
    if right.any() and untouched.any() and np.all(right | untouched):
        done = np.flatnonzero(right).tolist()
        return "layout", (f"heads {np.flatnonzero(untouched).tolist()} of {name} come back unrotated while heads {done} "
                          f"are right: it rotates {len(done)} of the {h} heads it is given (code written for one "
                          f"{'key' if name == 'k_embed' else 'query'} head)")
    return None, ""
