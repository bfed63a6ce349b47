"""The cases properties draw: the implementation's expectation (fixed, or drawn in the precision class a factory
promises), the pinned expectations and positions every property tries first, and the rows of one call."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.implementation import Implementation
from ropespec.properties.strategies import axes_expectations, expectations, make_vectors, pinned_rows, position_rows, vectors
from ropespec.spec.expectation import Expect


def promised(impl: Implementation, drawn: st.SearchStrategy[Expect]) -> st.SearchStrategy[Expect]:
    """Drawn expectations in the precision class a factory promises (``make.promise``, e.g. the shipped
    numpy and torch factories promise the strict class): shipped code is held to its own promise."""
    if not impl.promise:
        return drawn
    return drawn.map(lambda e: e.replace(**impl.promise))


def expect_strategy(impl: Implementation, *, partial: bool | None = None) -> st.SearchStrategy[Expect]:
    """The implementation's fixed expectation, or drawn ones for a factory without one."""
    if impl.expect is not None:
        return st.just(impl.expect)
    drawn = expectations(dtype=impl.dtype, max_position=impl.max_position, partial=partial)
    if impl.axes and partial is not False:  # a factory of multi-axis RoPE: 1-D and multi-axis expectations
        drawn = st.one_of(drawn, axes_expectations(kinds=impl.axes, dtype=impl.dtype, max_position=impl.max_position))
    return promised(impl, drawn)


def pinned_expects(impl: Implementation, *, partial: bool | None = None) -> list[Expect]:
    """Expectations every property tries first: the fixed one, or d = 2 (and a partial one), and for a factory of
    multi-axis RoPE one of unequal sections."""
    if impl.expect is not None:
        return [impl.expect]
    base = Expect(dtype=impl.dtype, max_position=impl.max_position, **impl.promise)
    if partial:
        return [base.replace(head_dim=8, rotary_dim=4)]
    out = [base.replace(head_dim=2), base.replace(head_dim=64, convention="interleaved")]
    if impl.axes and partial is None:
        out.append(PINNED_AXES[impl.axes[0]](base))
    return out


#: the pinned multi-axis expectation of each kind: unequal sections, a text model's (Qwen2-VL's) or an image
#: model's (FLUX's) convention
PINNED_AXES = {
    "chunked": lambda base: base.replace(head_dim=24, mrope_section=[2, 4, 6]),
    "interleaved": lambda base: base.replace(head_dim=32, mrope_section=[6, 5, 5], mrope_interleaved=True),
    "per-axis": lambda base: base.replace(head_dim=24, convention="interleaved", axes_dims_rope=[4, 8, 12]),
    "parity": lambda base: base.replace(head_dim=16, axes_parity=True),
}


def shift_range(expect: Expect, positions, reach: int | None = None) -> tuple[int, int]:
    """The shifts c that keep every one of ``positions`` inside the domain (the domain rule,
    :meth:`ropespec.spec.expectation.Expect.outside_domain`), and below ``reach`` where a property tests no further: c in
    [lo, hi], which holds 0 and holds no other shift only when the positions span all of it."""
    p = np.asarray(positions, dtype=np.int64)
    top = expect.max_position if reach is None else min(reach, expect.max_position)
    return -int(p.min()), top - 1 - int(p.max())


def nearest_shift(expect: Expect, positions, wanted: int, reach: int | None = None) -> int | None:
    """The shift nearest ``wanted`` (not 0) that keeps ``positions`` inside the domain (and below ``reach``); None
    when there is none."""
    lo, hi = shift_range(expect, positions, reach)
    c = min(max(wanted, lo), hi)
    if c == 0:
        c = 1 if hi >= 1 else -1 if lo <= -1 else 0
    return c or None


#: the lengths of a call every form is called at, in every profile: across the tile sizes real kernels use (64, 128,
#: 256, 1024 rows, heads or tokens) and no multiple of them, so that a tail a kernel masks wrongly is met (a RoPE right
#: for the first 128 rows of a call and wrong after passed every property when no call had more than 64 rows)
TILE_LENGTHS = (1, 127, 129, 255, 1000, 4097)
#: the query and key/value heads of a long batched call: more heads than one tile of 8 and no multiple of it,
#: grouped-query
TILE_HEADS, TILE_KV_HEADS = 9, 3


def listed(v) -> str:
    """An array in a message: whole when short, else its first and last entries and its shape (a long call's
    positions are thousands)."""
    v = np.asarray(v)
    if v.size <= 16:
        return str(v.tolist())
    flat = v.reshape(-1).tolist()
    return f"[{', '.join(map(str, flat[:4]))}, ..., {', '.join(map(str, flat[-2:]))}] (shape {v.shape})"


def tile_evidence(wrong_rows, right_alone) -> str | None:
    """The evidence that a long call's wrong rows are wrong because of where they sit in it: ``wrong_rows`` the wrong
    rows' indices in the call, ``right_alone(i)`` whether row i is right in a call of its own. Some rows before the
    first wrong one and the first wrong ones right alone: the call's size decides (a kernel's tiles, or the mask of
    its last tile); None otherwise."""
    bad = np.asarray(wrong_rows)
    if bad.size == 0 or bad[0] == 0 or not all(right_alone(int(i)) for i in bad[:4]):
        return None
    return (f"rows 0 to {int(bad[0]) - 1} of the call are right and {bad.size} rows from row {int(bad[0])} on are "
            f"wrong, while the first of them are right in calls of their own: the call's size decides (a kernel's "
            f"tiles, or the mask of its last tile, past row {int(bad[0])})")


def long_positions(expect: Expect, n: int, start: int = 0) -> np.ndarray:
    """Positions of a long call as a prefill has them: consecutive from ``start`` (wrapping inside the domain), as
    rows of ``expect`` ((n, A) for a multi-axis RoPE, each axis from its own start)."""
    m = expect.max_position
    run = (start + np.arange(n, dtype=np.int64)) % m
    if not expect.multi_axis:
        return run
    return np.stack([(run + 7 * a) % m for a in range(expect.n_axes)], axis=1)


def long_expects(impl: Implementation) -> list[Expect]:
    """The expectations long calls are made at: the fixed one, or a factory's pinned full-rotary one of 64 dims (and
    its multi-axis one, where it declares axes); one each, a long call costing what thousands of rows cost."""
    pinned = pinned_expects(impl)
    if impl.expect is not None:
        return pinned
    return [e for e in pinned if e.head_dim > 2]


def pinned_positions(impl: Implementation) -> list[int]:
    """p = 0, p = 1 and p = max_position - 1."""
    return [0, 1, impl.max_position - 1]


def pinned_rows_of(impl: Implementation, e: Expect) -> np.ndarray:
    """The pinned positions as rows of ``e``: (3,), or (3, A) with every axis at 0, 1 and max_position - 1 in turn."""
    return pinned_rows(e, pinned_positions(impl))


def rows_cases(impl: Implementation, *, partial: bool | None = None, with_x: bool = True) -> st.SearchStrategy[dict]:
    """Cases of one call: an expectation, 1 to 8 positions (position vectors of unequal axes, for a multi-axis RoPE)
    and (``with_x``) as many rows x."""

    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=partial), label="expect")
        n = draw(st.integers(1, 8), label="n")
        case = {"expect": e, "positions": draw(position_rows(e, n, max_value=e.max_position), label="positions")}
        if with_x:
            case["x"] = draw(vectors(e, n), label="x")
        return case

    return build()


def rows_pinned(impl: Implementation, *, partial: bool | None = None, with_x: bool = True) -> list[dict]:
    """The pinned cases of :func:`rows_cases`: positions 0, 1 and max_position - 1 (on every axis in turn)."""
    out = []
    for e in pinned_expects(impl, partial=partial):
        pos = pinned_rows_of(impl, e)
        case = {"expect": e, "positions": pos}
        if with_x:
            case["x"] = make_vectors(e, len(pos))
        out.append(case)
    return out


def decoding_case(e, seed: int = 0) -> dict:
    """One token per batch row (seq 1) in several batch rows and heads, as decoding calls apply(q, k, cos, sin): the
    shape whose contiguous q (b, h, 1, d) reports a seq stride of d (Liger's rope kernel took its row stride from it).
    Always checked, so that the verdict does not wait for the draw to meet it."""
    pos = pinned_rows(e, [3, 7])
    b = len(pos)
    h_q, h_kv = (2, 1) if e.n_heads == 1 else (e.n_heads, e.n_kv_heads)
    return {"expect": e, "positions": pos.reshape((b, 1) + pos.shape[1:]),
            "q": make_vectors(e, b * h_q, seed=seed).reshape(b, h_q, 1, e.head_dim),
            "k": make_vectors(e, b * h_kv, seed=seed + 1).reshape(b, h_kv, 1, e.head_dim)}
