"""The learned family: a factory ``make(expect)`` returning ``table(positions)`` (its rows, max_position of them),
with ``num_parameters`` or a ``weight`` array."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.families.base import Bound, Form, Op, i64, register


def op_lookup(host, fn, e, positions):
    out = host.call("table(positions)", fn, host.native_positions(positions, e))
    return host.rows(out, e, (len(positions), e.head_dim))


def op_parameters(host, fn, e):
    """A learned table's parameter count (num_parameters, or the size of weight); None if neither."""
    count = getattr(fn, "num_parameters", None)
    if count is None and hasattr(fn, "weight"):
        count = int(np.size(fn.weight))
    return None if count is None else int(count)


class LearnedBound(Bound):
    def lookup(self, positions: np.ndarray) -> np.ndarray:
        """table(positions) as float64 (n, d); raises Fault when the table raises."""
        return self._op("lookup", i64(positions))

    def parameters(self) -> int | None:
        """The table's parameter count (num_parameters or the size of weight)."""
        return self._op("parameters")


#: a learned table's lookups declare no positions to the domain rule: its bounds invariant asks past max_len on purpose
#: (a table must refuse a row it does not have), and every other learned property draws below it
LEARNED = Form("learned", "apply", None, ("learned.*",),
               {"lookup": Op(op_lookup, "table(positions)"), "parameters": Op(op_parameters, "the table's parameter count")},
               lambda host, fn, e: op_lookup(host, fn, e, np.array([0], dtype=np.int64)), LearnedBound)
register(LEARNED)
