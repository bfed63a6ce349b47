"""The table form: table(positions) -> (cos, sin), per pair or per dim, read back as one cos and one sin per pair."""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from ropespec.implementations.contract import CONTRACT_SHAPE, Fault
from ropespec.implementations.families.base import Bound, f64, i64
from ropespec.spec.definitions import rotate
from ropespec.spec.expectation import Expect


# -- the table builder ------------------------------------------------------------------------------------------
def per_dim(table: np.ndarray, oa, ob, r: int) -> np.ndarray:
    """A per-pair table (n, r/2) spread onto (n, r): pair i's value at both of its output dims."""
    out = np.empty((len(table), r))
    out[:, oa], out[:, ob] = table, table
    return out


def op_table(host, fn, e: Expect, positions):
    """table(positions) -> (cos, sin): each (n, rotary_dim/2), one value per pair, or (n, rotary_dim), one per dim,
    whose two dims of every pair must agree bit for bit; handed back per pair as float64."""
    out = host.call("table(positions)", fn, host.native_positions(positions, e))
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"returned {type(out).__name__}, expected a pair (cos, sin)", "shape")
    n, k = len(positions), e.rotary_dim // 2
    got = []
    for name, t in zip(("cos", "sin"), out):
        shape = tuple(np.shape(t))
        if shape not in ((n, k), (n, 2 * k)):
            raise Fault(f"returned {name} of shape {shape}, expected ({n}, {k}) (one value per pair) or "
                        f"({n}, {2 * k}) (one per dim)", "shape", cause=CONTRACT_SHAPE)
        got.append(host.rows(t, e, shape))
    if got[0].shape != got[1].shape:
        raise Fault(f"returned cos of shape {got[0].shape} and sin of shape {got[1].shape}", "shape")
    if got[0].shape[1] == 2 * k:
        _, _, oa, ob = e.pair_index()
        for name, t in zip(("cos", "sin"), got):
            differ = np.flatnonzero((t[:, oa] != t[:, ob]).any(axis=0))
            if differ.size:
                i = int(differ[0])
                raise Fault(f"the two dims of pair {i} in the per-dim {name} table differ ({t[:, oa][:, i].tolist()[:3]} "
                            f"vs {t[:, ob][:, i].tolist()[:3]}): one value per pair must be duplicated bit for bit "
                            f"where the {e.convention} convention writes the pair", "layout")
        got = [t[:, oa] for t in got]
    return got[0], got[1]


class TableBound(Bound):
    def table(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """table(positions) -> (cos, sin), each (n, rotary_dim/2) float64, one value per pair (a per-dim table is
        checked for its duplicated dims and reduced in the worker)."""
        return self._op("table", i64(positions))

    def rotate_by_table(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The RoPE the table defines, f(x, p) = R(table(p)) x (ropespec.spec.definitions.rotate in float64): what the
        diagnoses, the fingerprint and the precision sweep measure."""
        c, s = self.table(positions)
        a, b, oa, ob = self.expect.pair_index()
        x = f64(x)
        out = x.copy()
        out[:, oa], out[:, ob] = rotate(x[:, a], x[:, b], c, s)
        return out


def table_is_plain(obj: Callable) -> bool:
    """table(positions): one argument, as a factory's, told apart by its name."""
    try:
        first = next(iter(inspect.signature(obj).parameters))
    except (TypeError, ValueError, StopIteration):
        return False
    return first.lower().startswith("position")
