"""The position-ids family: a multimodal position-id builder, ``position_ids(segments) -> positions (n, 3)``, or a
factory ``make(expect)`` returning one (the expectation's ``video_time`` and ``tokens_per_second`` are the model's
rules, :mod:`ropespec.spec.positions`).

* one sequence: ``position_ids(segments)`` with segments the plain tuples of :mod:`ropespec.spec.positions` (``("text", n)``,
  ``("image", (t, h, w))``, ``("video", (t, h, w), seconds)``); it returns positions (n, 3), integers, one row per
  token and a column per axis (t, h, w), or ``(positions, next_position)`` with the position decoding continues at;
* a batch (the builder says ``position_ids.batched = True``): ``position_ids(rows)`` with rows a list of sequences,
  each left-padded by a ``("pad", k)`` segment to one length n, returning positions (batch, n, 3) (the pads' rows
  are not read) and the next position of each row, (batch, 3) or (batch,): transformers' ``get_rope_index`` with
  its attention mask and ``rope_deltas``.
"""

from __future__ import annotations

import inspect

import numpy as np

from ropespec.implementations.contract import Fault, Unsupported
from ropespec.implementations.families.base import Bound, Form, Op, register
from ropespec.spec.positions import length


def _integers(out, what: str, shape: tuple[int, ...]) -> np.ndarray:
    """An implementation's positions as int64 numpy: an integer array (numpy, torch, jax or nested lists) of
    ``shape``; a ``shape`` Fault otherwise."""
    if hasattr(out, "detach"):  # torch
        out = out.detach().cpu().numpy()
    try:
        arr = np.asarray(out)
    except Exception as e:  # noqa: BLE001 - whatever it returned, the answer is one line
        raise Fault(f"{what}: returned {type(out).__name__}, not an array of integers ({e})", "shape") from None
    if arr.dtype.kind not in "iu":
        raise Fault(f"{what}: returned a {arr.dtype} array, expected integers (position ids)", "shape")
    if arr.shape != shape:
        raise Fault(f"{what}: returned shape {arr.shape}, expected {shape}", "shape")
    return arr.astype(np.int64)


def _split(out):
    """(positions, next) of a builder's result: a pair, or the positions alone (next None)."""
    if isinstance(out, tuple) and len(out) == 2:
        return out
    return out, None


def _next(nxt, what: str, rows: int) -> np.ndarray | None:
    """The next positions as (rows, 3) int64: given per row as (rows,) (every axis alike), (rows, 1) or (rows, 3)."""
    if nxt is None:
        return None
    if hasattr(nxt, "detach"):
        nxt = nxt.detach().cpu().numpy()
    arr = np.asarray(nxt)
    if arr.dtype.kind not in "iu":
        raise Fault(f"{what}: the next position is a {arr.dtype} value, expected integers", "shape")
    arr = arr.reshape(rows, -1) if arr.size in (rows, 3 * rows) else arr
    if arr.shape not in ((rows, 1), (rows, 3)):
        raise Fault(f"{what}: the next position has shape {np.shape(nxt)}, expected ({rows},) or ({rows}, 3)", "shape")
    return np.broadcast_to(arr, (rows, 3)).astype(np.int64)


def _segments(segments) -> list[tuple]:
    """The plain tuples a builder receives (numbers as Python ints and floats)."""
    out = []
    for s in segments:
        if s[0] in ("text", "pad"):
            out.append((s[0], int(s[1])))
        elif s[0] == "image":
            out.append(("image", tuple(int(v) for v in s[1])))
        else:
            out.append(("video", tuple(int(v) for v in s[1]), float(s[2])))
    return out


def op_build(host, fn, e, segments):
    """One sequence: (positions (n, 3), next (3,) or None)."""
    segs, n = _segments(segments), length(segments)
    if getattr(fn, "batched", False):
        pos, nxt = op_batch(host, fn, e, [segs])
        return pos[0], None if nxt is None else nxt[0]
    pos, nxt = _split(host.call("position_ids(segments)", fn, segs))
    return (_integers(pos, "position_ids(segments)", (n, 3)),
            None if nxt is None else _next(nxt, "position_ids(segments)", 1)[0])


#: why the batch invariants are not about a builder of one sequence at a time
ONE_SEQUENCE = "TARGET builds one sequence at a time (a batched builder says position_ids.batched = True and takes rows)"


def op_batch(host, fn, e, rows):
    """A left-padded batch: (positions (b, n, 3), next (b, 3) or None); Unsupported for a one-sequence builder."""
    if not getattr(fn, "batched", False):
        raise Unsupported(ONE_SEQUENCE)
    rows = [_segments(r) for r in rows]
    n = {length(r) for r in rows}
    if len(n) != 1:
        raise ValueError(f"rows of one batch are padded to one length, got {sorted(n)}")
    pos, nxt = _split(host.call("position_ids(rows)", fn, rows))
    return (_integers(pos, "position_ids(rows)", (len(rows), n.pop(), 3)),
            _next(nxt, "position_ids(rows)", len(rows)))


def op_batched(host, fn, e) -> bool:
    """Whether the builder takes a batch (``position_ids.batched = True``)."""
    return bool(getattr(fn, "batched", False))


class PositionsBound(Bound):
    def batched(self) -> bool:
        """Whether it is a batched builder, position_ids(rows)."""
        return self._op("batched")

    def build(self, segments) -> tuple[np.ndarray, np.ndarray | None]:
        """position_ids(segments): (positions (n, 3) int64, the next position (3,) or None)."""
        return self._op("build", list(segments))

    def batch(self, rows) -> tuple[np.ndarray, np.ndarray | None]:
        """position_ids(rows) of a batched builder: (positions (b, n, 3), next (b, 3) or None)."""
        return self._op("batch", [list(r) for r in rows])


def _plain(obj) -> bool:
    """position_ids(segments) or position_ids(rows): one argument, as a factory's, told apart by its name."""
    try:
        first = next(iter(inspect.signature(obj).parameters))
    except (TypeError, ValueError, StopIteration):
        return False
    return first.lower() in ("segments", "rows", "sequence", "batch")


POSITION_IDS = Form("position-ids", "apply", ((1,), "(segments)"), ("position-ids.*",),
                    {"build": Op(op_build, "position_ids(segments)"), "batch": Op(op_batch, "position_ids(rows)"),
                     "batched": Op(op_batched, "whether it takes a batch")},
                    lambda host, fn, e: op_build(host, fn, e, [("text", 2)]), PositionsBound, plain_if=_plain)
register(POSITION_IDS)
