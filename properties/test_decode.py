"""Spec section "decode": a KV cache filled by prefill and single-token steps must hold the keys a
fresh full pass computes at every length (dynamic NTK and LongRoPE change the table with the length)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from implementations.contract import Failure
from properties.assertions import assert_close
from properties.framework import exact, output_bound, promised, rope_property
from properties.strategies import scaled_expectations, vectors
from spec.scaling import original_length


def _cases(subject):
    @st.composite
    def build(draw):
        if subject.expect is not None:
            e = subject.expect
        else:
            e = draw(promised(subject, scaled_expectations(rope_types=("dynamic", "longrope"), dtype=subject.dtype)), label="expect")
            L = 16  # short sequences keep the exact fresh passes cheap
            scaling = dict(e.to_dict()["rope_scaling"], original_max_position_embeddings=L)
            e = e.replace(head_dim=min(e.head_dim, 16), max_position=4 * L, rope_scaling=None)
            if scaling["rope_type"] == "longrope":
                n = e.rotary_dim // 2
                scaling["short_factor"], scaling["long_factor"] = scaling["short_factor"][:n], scaling["long_factor"][:n]
            e = e.replace(rope_scaling=scaling)
        L = original_length(e)
        prefill = draw(st.integers(1, max(1, L - 1)), label="prefill length")
        steps = draw(st.integers(1, min(2 * L, e.max_position - prefill)), label="steps")
        return {"expect": e, "prefill": prefill, "steps": steps, "x": draw(vectors(e, prefill + steps), label="x")}

    return build()


@rope_property("decode.consistency", cases=_cases, max_examples=10)
def test_consistency(bind, case):
    e, n0, k, x = case["expect"], case["prefill"], case["steps"], case["x"]
    dec = bind.fresh(e)
    pos = np.arange(n0 + k, dtype=np.int64)
    rng = np.random.default_rng(n0 + 7919 * k)
    L = original_length(e)
    worst = 0.0
    for t in range(n0 - 1, n0 + k):
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
            evidence = ""
            if stale:
                j, length = stale[0]
                evidence = (f"; every cached key still has the rotation of the call that added it: row {j} (p = {j}) "
                            f"has the table of length {length}, not of length {t + 1}, and so do {len(stale) - 1} more "
                            f"rows whose rotation changed: a stale cache")
            raise Failure(f"decode diverges from a fresh pass first at length {t + 1} "
                          f"({'prefill' if t == n0 - 1 else f'step {t - n0 + 1}'}; original length "
                          f"{original_length(e)}): {err.message}{evidence}",
                          "scaling" if stale else err.diagnosis, err.ratio) from None
    return worst


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
