"""Structural faults, the most basic first: an output that does not depend on x alone (rows mixed, non-finite),
the convention and layout of the pairs, the rotary dims."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.contract import Fault
from ropespec.properties import probe
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect
from ropespec.spec.tables import table_variant


#: words of a structural fault: once one is found, every other failing property follows from it
STRUCTURAL = ("input-mutated", "non-finite", "nondeterministic", "not-a-rotation", "convention", "layout", "rotary-dim")


def root_cause(f, e: Expect) -> tuple[str, str] | None:
    """(word, evidence) of a structural fault of f under e (a word of :data:`STRUCTURAL`), or None: what
    makes every measurement read along the expected pairs meaningless, and so the root of other failures."""
    try:
        return _structure_of(probe.text_view(f, e), e)
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return None


def _structure_of(f, e: Expect) -> tuple[str, str] | None:
    d = e.head_dim
    top = e.max_position - 1
    probe_pos = np.array(sorted({0, 1, 5, min(top, 999), top}), dtype=np.int64)
    x = np.random.default_rng(0).standard_normal((len(probe_pos), d))
    call = f.call(x, probe_pos) if hasattr(f, "call") else None
    if call is not None and call.input_mutated:
        return "input-mutated", f"the call wrote into its argument {call.input_mutated}"
    y1 = call.out if call is not None else f(x, probe_pos)
    if not np.isfinite(y1).all():
        return "non-finite", nonfinite_evidence(f, x, probe_pos, y1)
    y2 = f(x, probe_pos)
    if not np.array_equal(y1, y2):
        k = np.unravel_index(int(np.argmax(np.abs(y1 - y2))), y1.shape)
        return "nondeterministic", f"two calls on the same input differ by {abs(y1[k] - y2[k]):.3g} at row {k[0]}, dim {k[1]}"
    mixed = _rows_mixed(f, e, x, probe_pos, y1)
    if mixed:
        return "layout", mixed
    zero = f(np.zeros((2, d)), np.array([1, top], dtype=np.int64))
    if np.any(zero != 0):
        j = int(np.argmax(np.abs(zero).max(axis=0)))
        return "not-a-rotation", f"f(0, p)[dim {j}] = {float(zero[np.argmax(np.abs(zero[:, j])), j]):.3g}, not 0: the output has a part that does not depend on x"
    pr = probe.convention(f, d)
    if pr.problem:
        return "not-a-rotation", pr.problem
    paired = {j for pair in pr.pairs for j in pair}
    alone = [j for j in range(d) if j not in paired and j not in pr.untouched]
    if alone:
        return "not-a-rotation", f"dim {alone[0]} changes without a partner dim: it is scaled, not rotated"
    return _structure(pr, e)


def _rows_mixed(f, e: Expect, x: np.ndarray, pos: np.ndarray, y: np.ndarray) -> str | None:
    """The evidence that the rows of one call are not rotated by their own positions but by another row's (the first
    row's, or positions running on from it, or restarting at 0), where one of these models fits every row; or None.
    Each row of the call is compared with the same row called alone, at its own position and at each candidate: a
    row-wise implementation gives the same either way, and a row that matches only another position tells where its
    position was read from (a packed layout that ignores cu_seqlens or the other sequences' offsets, positions[0]
    broadcast over the batch). A table that depends on the call's length (dynamic scaling) is not compared: its rows
    differ alone by design."""
    if table_variant(e, e.max_position) != table_variant(e, None) or len(pos) < 2:
        return None
    tol = 64 * tolerance.unit_roundoff(e.dtype) * np.abs(x).max(axis=1)

    def alone(i: int, p: int) -> np.ndarray:
        return f(x[i:i + 1], np.array([p], dtype=np.int64))[0]

    own = [np.abs(y[i] - alone(i, int(pos[i]))).max() <= tol[i] for i in range(len(pos))]
    if all(own):
        return None
    models = {"the first row's position": lambda i: int(pos[0]),
              "positions running on from the first row's (p_0 + i)": lambda i: int(pos[0]) + i,
              "positions restarting at 0 (i)": lambda i: i}
    for said, model in models.items():
        if all(model(i) < e.max_position and np.abs(y[i] - alone(i, model(i))).max() <= tol[i]
               for i in range(len(pos))):
            return (f"in one call of {len(pos)} rows at positions {pos.tolist()}, every row is rotated by {said}, and "
                    f"each row called alone is rotated by its own: the other rows' positions (other sequences' "
                    f"offsets, cu_seqlens, other batch rows) are ignored")
    return None  # rows that differ alone by no model (a table sized by the call's length) are another field's


def nonfinite_evidence(f, x: np.ndarray, positions: np.ndarray, y: np.ndarray) -> str:
    """Where one call's output is non-finite, and whether that depends on the position or on the call: each such
    row is called again alone at its position, and a row finite alone is non-finite only beside the call's other
    rows (an overflow that grows with the call's length or largest position, as xPos's scale does)."""
    rows = np.flatnonzero(~np.isfinite(y).all(axis=1))
    at = sorted(set(positions[rows].tolist()))
    shown = ", ".join(str(p) for p in at[:6]) + (", ..." if len(at) > 6 else "")
    alone = []
    for i in rows[:4]:
        try:
            alone.append(bool(np.isfinite(f(x[i : i + 1], positions[i : i + 1])).all()))
        except Fault:
            alone.append(False)
    where = f"f(x, p) is non-finite at p = {shown} in a call of {len(positions)} rows up to p = {int(positions.max())}"
    if alone and all(alone):
        return (f"{where}, and finite when called with p alone: the non-finite values depend on the call (its "
                f"length or largest position), not on p")
    return where


_SAYS = {"half": "pairs (i, i + r/2) rotated in place", "interleaved": "pairs (2i, 2i + 1) rotated in place",
         "rope_interleave": "interleaved pairs (2i, 2i + 1) written to (i, i + r/2)"}


def _structure(pr: probe.Pairing, e: Expect) -> tuple[str, str] | None:
    """``rotary-dim``, ``convention`` (the wrong dims turn together) or ``layout`` (the right pairs,
    written to the wrong dims) from the measured convention; None when it is e's."""
    still = set(e.method.still_pairs(e))  # pairs of frequency 0 pass through (proportional RoPE's)
    # which dims turn together and where they are written does not depend on the way they turn: the probe reads each
    # pair (a, b) with a < b, as the forward direction states it, and the direction is measured apart (its word is
    # the frequencies' diagnosis)
    ef = e.replace(direction="forward")
    turning = [(p, o) for i, (p, o) in enumerate(zip(ef.pairs(), ef.out_pairs())) if i not in still]
    want = sorted(p for p, _ in turning)
    r = 2 * len(turning)  # the dims that turn
    if sorted(pr.pairs) == want:
        wrong = [(p, pr.out[p], o) for p, o in turning if pr.out[p] != o]
        if not wrong:
            return None
        (a, b), got, o = wrong[0]
        found = pr.convention(e.head_dim, e.rotary_dim)
        how = f"the {found} layout ({_SAYS[found]})" if found else "another layout"
        return "layout", (f"the right dims turn together, but pair ({a}, {b}) is written to dims {got}, expected {o}: "
                          f"{how}, expected {e.convention} ({_SAYS[e.convention]}); {len(wrong)} of {len(want)} pairs moved")
    touched = e.head_dim - len(pr.untouched)
    if touched != r:
        return "rotary-dim", _rotary_dim_evidence(e.head_dim, pr.untouched, e.rotary_dim, len(still), e.rotary_start)
    rest = [int(j) for j in e.passthrough]
    if not still and sorted(pr.untouched) != rest:  # as many dims turn, but others: the rotated block starts elsewhere
        shown = lambda dims: ", ".join(str(j) for j in dims[:4]) + (", ..." if len(dims) > 4 else "")  # noqa: E731
        return "rotary-dim", (f"{touched} of {e.head_dim} dims rotate, as expected, but dims {shown(sorted(pr.untouched))} "
                              f"pass through where the expectation passes dims {shown(rest)} (rotary_start "
                              f"{e.rotary_start}): the rotated dims start at another dim")
    got = dict(pr.pairs)
    a = next(a for a, b in want if got.get(a) != b)
    found = pr.convention(e.head_dim, e.rotary_dim)
    if found:
        return "convention", (f"the {found} convention ({_SAYS[found]}), expected {e.convention}: dim {a} turns with dim "
                              f"{got.get(a)}, not with dim {dict(want)[a]}")
    return "convention", f"dim {a} turns with dim {got.get(a)}, expected dim {dict(want)[a]} ({e.convention} convention)"


def _rotary_dim_evidence(d: int, untouched: list[int], r: int, still: int = 0, start: int = 0) -> str:
    """'6 of 8 dims rotate and 2 pass through (dims 6, 7), expected rotary_dim 4: ...' as a sentence (``still``: the
    pairs of frequency 0 among the rotary dims, which pass through too)."""
    touched = d - len(untouched)
    if untouched:
        shown = ", ".join(str(j) for j in untouched[:4]) + (", ..." if len(untouched) > 4 else "")
        what = f"{touched} of {d} dims rotate and {len(untouched)} pass through (dims {shown})"
    else:
        what = f"all {d} dims rotate and none passes through"
    if still:
        return (f"{what}, expected {r - 2 * still} rotating: {still} of the {r // 2} rotary pairs have frequency 0 "
                f"(proportional RoPE's pairs past partial_rotary_factor) and pass through")
    rest = [j for j in range(d) if not start <= j < start + r]
    want = f"{r} rotating and dims {dim_runs(rest)} passing through" if r < d else "every dim rotating"
    return f"{what}, expected rotary_dim {r} ({want})"


def dim_runs(dims) -> str:
    """Sorted dims as runs of consecutive ones: '0..1, 6..7'."""
    spans: list[list[int]] = []
    for j in (int(v) for v in dims):
        if spans and j == spans[-1][1] + 1:
            spans[-1][1] = j
        else:
            spans.append([j, j])
    return ", ".join(f"{a}..{b}" if b > a else f"{a}" for a, b in spans)
