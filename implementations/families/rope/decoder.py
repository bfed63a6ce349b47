"""A decoder of the apply form: prefill(x, positions) and step(x, position), each returning the keys it holds."""

from __future__ import annotations


import numpy as np

from ropespec.implementations.contract import Keys
from ropespec.implementations.families.base import Bound, f64, i64


# -- a decoder of the apply form: prefill(x, positions) and step(x, position) ------------------------------------
def _some(out, rows, convert):
    """Every key (rows None), or only ``rows`` of them as :class:`Keys`; ``convert(out, rows)`` checks the whole
    result (kind, dtype, shape) and converts the rows asked for."""
    if rows is None:
        return convert(out, None)
    values = convert(out, rows)  # raises a Fault unless the shape is the one expected
    return Keys(len(out), rows, values)


def op_prefill(host, fn, e, x, positions, rows=None):
    nx, npos = host.native(x, positions, e)
    return _some(host.call("prefill", fn.prefill, nx, npos), rows,
                 lambda out, r: host.rows(out, e, (len(x), e.head_dim), r))


def op_step(host, fn, e, x, position, rows=None):
    nx, _ = host.native(x, np.array([position]), e)
    return _some(host.call("step", fn.step, nx, int(position)), rows,
                 lambda out, r: host.rows(out, e, (position + 1, e.head_dim), r))


class DecoderBound(Bound):
    """A decoder: prefill(x, positions) and step(x, position), each returning every key it attends over, rotated."""

    def prefill(self, x: np.ndarray, positions: np.ndarray, rows: np.ndarray | None = None):
        """The keys the decoder attends over after prefilling rows x at positions (with ``rows``: only those rows
        come back, as :class:`Keys`)."""
        return self._op("prefill", f64(x), i64(positions), None if rows is None else i64(rows))

    def step(self, x: np.ndarray, position: int, rows: np.ndarray | None = None):
        """The keys after one more row x (shape (1, head_dim)) at ``position`` (with ``rows``: only those rows come
        back, as :class:`Keys`: a decoder returns every key at every step, and all of them across the process
        boundary made a 4096-token decode cost O(n^2) bytes)."""
        return self._op("step", f64(x), int(position), None if rows is None else i64(rows))
