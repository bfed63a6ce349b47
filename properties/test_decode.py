"""Spec section "decode": a KV cache filled by prefill and single-token steps must hold the keys a
fresh full pass computes at every length (dynamic NTK and LongRoPE change the table with the length)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import exact, output_bound
from ropespec.properties.cases import promised
from ropespec.properties.decoding import offset_words, read_position
from ropespec.properties.framework import progress, rope_property
from ropespec.properties.strategies import make_vectors, scaled_expectations, vectors
from ropespec.spec.expectation import Expect
from ropespec.spec import methods
from ropespec.spec.scaling import original_length


#: the longest decode a case runs: steps past the original length L (a decode to 2L when L is at most this)
MAX_STEPS_PAST_L = 4096
#: the steps of a drawn case (its prefill length is drawn anywhere up to the end of the long decode)
WINDOW = 64


def _end(e) -> int:
    """Where the long decode ends: length 2L (L the original length; for a table that does not depend on
    the length, L stands for the length past which positions are drawn), at most MAX_STEPS_PAST_L past L
    and within max_position."""
    L = _length(e)
    return min(2 * L, L + MAX_STEPS_PAST_L, e.max_position)


def _length(e) -> int:
    return original_length(e) if e.method.length_dependent else min(e.max_position // 2, MAX_STEPS_PAST_L)


def _short(e):
    """``e`` with original length 16 (head_dim at most 16, max_position 64): every case crosses it cheaply."""
    L = 16
    scaling = dict(e.to_dict()["rope_scaling"], original_max_position_embeddings=L)
    e = e.replace(head_dim=min(e.head_dim, 16), max_position=4 * L, rope_scaling=None)
    n = e.rotary_dim // 2
    scaling.update({k: v[:n] for k, v in scaling.items() if isinstance(v, list)})  # per-pair factors: the first n
    return e.replace(rope_scaling=scaling)


def _cases(impl):
    """A prefill drawn anywhere up to the end of the long decode (often at L - 1, L or L + 1, where the
    table changes), then up to WINDOW single-token steps. The long decode itself is pinned (_pinned)."""
    if impl.expect is not None:
        expects = st.just(impl.expect)
    else:  # a factory without --expect: dynamic NTK and LongRoPE, shortened
        expects = promised(impl, scaled_expectations(rope_types=methods.names(lambda m: m.length_dependent),
                                                       dtype=impl.dtype)).map(_short)

    @st.composite
    def build(draw):
        e = draw(expects, label="expect")
        L, end = _length(e), _end(e)
        edges = sorted({n for n in (1, L - 1, L, L + 1, end - 1) if 1 <= n < end})
        prefill = draw(st.one_of(st.sampled_from(edges), st.integers(1, end - 1)), label="prefill length")
        steps = draw(st.integers(1, min(WINDOW, end - prefill)), label="steps")
        return {"expect": e, "prefill": prefill, "steps": steps, "x": draw(vectors(e, prefill + steps), label="x")}

    return build()


def _pinned(impl):
    """The long decode every run has: prefill L - 1 tokens, then one step at a time across the original
    length L to 2L (MAX_STEPS_PAST_L past L at most), every step checked."""
    if impl.expect is not None:
        e = impl.expect
    else:
        e = Expect(head_dim=16, dtype=impl.dtype, max_position=64, **impl.promise,
                   rope_scaling={"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16})
    prefill, end = max(1, _length(e) - 1), _end(e)
    if end <= prefill:
        return []
    return [{"expect": e, "prefill": prefill, "steps": end - prefill, "x": make_vectors(e, end)}]


@rope_property("decode.consistency",
               rule=("component_bound of the cached and the fresh key, plus the reference's own error "
                      "(FAST_REFERENCE_ERROR where fast_reference_suffices)"),
               cases=_cases, pinned=_pinned, max_examples=10)
def test_consistency(bind, case):
    e, n0, k, x = case["expect"], case["prefill"], case["steps"], case["x"]
    dec = bind.fresh(e)
    pos = np.arange(n0 + k, dtype=np.int64)
    rng = np.random.default_rng(n0 + 7919 * k)
    L = original_length(e)
    worst = 0.0
    for t in range(n0 - 1, n0 + k):
        progress(f"length {t + 1} of {n0 + k}")
        rows = _rows_to_check(t, n0, n0 + k, L, rng)
        # only the rows checked cross the process boundary (the decoder's count and shape are checked in full)
        keys = dec.prefill(x[:n0], pos[:n0], rows=rows) if t == n0 - 1 else dec.step(x[t : t + 1], t, rows=rows)
        # a fresh full pass at this length (row t, the newest, sets the length), at the rows checked
        fresh, own = exact(e, x[rows], pos[rows])  # the fast reference where it suffices, the bound carrying its error
        if len(keys) != t + 1:
            raise Failure(f"after {'prefill' if t == n0 - 1 else 'step'} to length {t + 1} the decoder holds {len(keys)} "
                          f"keys, but should hold {t + 1}", "shape")
        try:
            worst = max(worst, assert_close(
                "cached key", keys.values, fresh, output_bound(e, x[rows], pos[rows]) + own,
                call=f"after {'prefill' if t == n0 - 1 else 'step'} to length {t + 1}", dtype=e.dtype,
                index_names=("row", "dim")))
        except Failure as err:
            stale = _stale_rows(e, x, pos, keys, n0, t)
            evidence, word = err.evidence, "scaling" if stale else err.diagnosis
            moved = _step_position(e, x, pos, keys, t, n0) if t >= n0 and not stale else None
            if moved:
                evidence, word = moved, "position-offset"
            if stale:
                j, length = stale[0]
                evidence = (f"every cached key still has the rotation of the call that added it: row {j} (p = {j}) "
                            f"has the table of length {length}, not of length {t + 1}, and so do {len(stale) - 1} more "
                            f"rows whose rotation changed: a stale cache")
            raise err.named(word, evidence, what=f"decode diverges from a fresh pass first at length {t + 1} "
                                                 f"({'prefill' if t == n0 - 1 else f'step {t - n0 + 1}'}; original "
                                                 f"length {original_length(e)}): {err.what}") from None
    return worst


def _step_position(e, x, pos, keys, t, n0) -> str | None:
    """The position a step rotated its new key at, read off the key, where it is not the step's own and the rows
    before it are right: said with the positions the steps used (0: a position never advanced; one early or late: the
    cache offset read before it is advanced, or advanced twice; any other: where it was); None otherwise."""
    rows = np.asarray(keys.rows)
    newest = int(np.flatnonzero(rows == t)[0]) if t in rows else None
    if newest is None:
        return None
    older = rows < t
    if older.any():
        want, own = exact(e, x[rows[older]], pos[rows[older]])
        if not np.all(np.abs(keys.values[older] - want) <= output_bound(e, x[rows[older]], pos[rows[older]]) + own):
            return None
    at = read_position(e, x[t], keys.values[newest], t)
    if at is None or at == t:
        return None
    how = offset_words(at, t)
    step = t - n0 + 1
    before = f"; steps 1 to {step - 1} used their own positions, {n0} to {t - 1}" if step > 2 else \
        f"; step 1 used its own position, {n0}" if step == 2 else ""
    return (f"step {step} (to length {t + 1}) rotates its new key at position {at} where {t} is due ({how}){before}, "
            f"and the keys before it are right")


#: every cached row is checked while the sequence is this short, at the last step and at the first step past
#: the original length; otherwise the newest row, the 8 before it and 48 drawn others (a stale table shows in
#: every old row whose rotation changed, so a sample finds it)
_ALL_ROWS_UP_TO = 256


def _rows_to_check(t: int, n0: int, end: int, L: int, rng) -> np.ndarray:
    if t < _ALL_ROWS_UP_TO or t == end - 1 or t == L or t == n0 - 1:
        return np.arange(t + 1)
    recent = np.arange(max(0, t - 8), t + 1)
    drawn = rng.choice(t, size=min(48, t), replace=False)
    return np.unique(np.concatenate([drawn, recent]))


def _stale_rows(e, x, pos, keys, n0, t) -> list[tuple[int, int]]:
    """The evidence of a stale cache: every cached key checked (rows before t) equals the rotation at the length
    it was added with, and these rows' rotations changed since ([(row, length it was added at)]; empty
    when that is not so, or when no row tells the tables apart: row 0 at p = 0 is the same in every table)."""
    now = exact(e, x[: t + 1], pos[: t + 1])[0]
    changed = []
    for i, j in enumerate(int(r) for r in keys.rows):  # the rows that came back
        if j >= t:
            continue
        length = n0 if j < n0 else j + 1
        then = exact(e, x[:length], pos[:length])[0][j]
        bound = output_bound(e, x[:length], pos[:length])[j]
        if not np.all(np.abs(keys.values[i] - then) <= bound):
            return []
        if not np.all(np.abs(now[j] - then) <= bound):
            changed.append((j, length))
    return changed
