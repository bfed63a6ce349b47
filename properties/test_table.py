"""Spec section "table": a cos/sin table builder, table(positions) -> (cos, sin), checked on its own
(ropespec check --form table): a rotary-embedding module's forward, vLLM's cos_sin_cache.

The table of pair i at position p is the rotation of the unit vector (1, 0) of that pair: (g cos p theta'_i,
g sin p theta'_i), g the attention factor (transformers multiplies it into the table). So the reference and
the bound are conformance's, for a pair of norm 1, and a failure is named by the same diagnoses, run on the
RoPE the table defines (f(x, p) = R(table(p)) x).
"""

from __future__ import annotations

import numpy as np

from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import exact, output_bound
from ropespec.properties.cases import TILE_LENGTHS, listed, long_expects, long_positions, rows_cases, rows_pinned
from ropespec.properties.framework import rope_property


def unit_pairs(e, n: int) -> np.ndarray:
    """n rows whose every pair is (1, 0): their rotation is the table."""
    x = np.zeros((n, e.head_dim))
    a, _, _, _ = e.pair_index()
    x[:, a] = 1.0
    return x


def _cases(impl):
    return rows_cases(impl, with_x=False)


def _pinned(impl):
    return rows_pinned(impl, with_x=False) + [{"expect": e, "positions": long_positions(e, n)}
                                              for e in long_expects(impl) for n in (TILE_LENGTHS[-1],)]


@rope_property("table.angles",
               rule=("component_bound of a pair of norm g (the table is the rotation of (1, 0)), plus the "
                      "reference's own error; the two dims of a per-dim table exact (bit for bit)"),
               cases=_cases, pinned=_pinned)
def test_angles(bind, case):
    e, pos = case["expect"], case["positions"]
    c, s = bind(e).table(pos)
    x = unit_pairs(e, len(pos))
    want, own = exact(e, x, pos)
    _, _, oa, ob = e.pair_index()
    got = np.concatenate([c, s], axis=1)
    expected = np.concatenate([want[:, oa], want[:, ob]], axis=1)
    bound = output_bound(e, x, pos) + own
    bound = np.concatenate([bound[:, oa], bound[:, ob]], axis=1)
    k = e.n_pairs
    try:
        return assert_close("(cos | sin)", got, expected, bound, call=f"table(positions={listed(pos)}): columns are the "
                            f"cos of pairs 0..{k - 1}, then their sin", dtype=e.dtype, index_names=("row", "column"))
    except Failure as err:
        raise Failure(err.message, None, err.ratio) from None  # named by the diagnoses, on the RoPE it defines
