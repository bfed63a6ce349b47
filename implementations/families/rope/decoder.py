"""A decoder of the apply form: prefill(x, positions) and step(x, position), each returning the keys it holds."""

from __future__ import annotations


import numpy as np

from ropespec.implementations.contract import Fault, Keys
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


#: the most elements (rows times head_dim) one prefill of :func:`as_generated` hands a decoder: 64 MB of float64
#: keys, a prefill of 65536 rows at head_dim 128 (every long decode a case runs: 2L at L = 32768)
GENERATED_ELEMENTS = 1 << 23


def as_generated(fresh, release, e):
    """A decoder as one function f(x, positions), called only as a generate loop calls it: a fresh decoder prefilled
    at positions 0, 1, ..., n - 1 with each row of x placed at its own position (zeros between them), n one past the
    largest position, and only the rows of x read back. A decoder's prefill is handed a prompt from its start and
    nothing else, so a probe at positions [0, 1, 5, 999] is not a call it can receive; repeated positions are
    prefilled once per repetition. A position whose prefill would pass :data:`GENERATED_ELEMENTS` is a Fault of the
    view (the diagnoses then read within the positions the failing case reached), not a call made."""
    cap = max(2, GENERATED_ELEMENTS // max(1, e.head_dim))

    def f(x, positions):
        x, positions = f64(x), i64(positions)
        if positions.ndim != 1:  # a multi-axis RoPE's position vectors: no prompt order to lay them in
            dec = fresh()
            try:
                return dec.prefill(x, positions)
            finally:
                release(dec)
        out = np.empty_like(x)
        todo = np.arange(len(positions))
        while len(todo):  # one prefill per repetition of a position: the first row of each position left
            _, first = np.unique(positions[todo], return_index=True)
            now, todo = todo[first], np.delete(todo, first)
            n = int(positions[now].max()) + 1
            if n > cap:
                raise Fault(f"a decoder is read as a generate loop calls it, a prompt prefilled from position 0: a "
                            f"prefill to position {n - 1} passes the {cap} rows this reading hands it", None)
            prompt = np.zeros((n, e.head_dim))
            prompt[positions[now]] = x[now]
            dec = fresh()
            try:
                out[now] = dec.prefill(prompt, np.arange(n, dtype=np.int64), rows=positions[now]).values
            finally:
                release(dec)
        return out

    return f
