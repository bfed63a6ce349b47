"""The xPos family: ``xpos(q, k, q_positions, k_positions) -> (q', k')``, RoPE with a per-pair decay (queries scaled
by zeta_i^(m / scale_base), keys by its inverse), or a factory ``make(expect)`` returning one; q (n_q, head_dim),
k (n_k, head_dim). The expectation's ``xpos_scale_base`` is its decay, ``head_dim``, ``rotary_dim``, ``rope_theta``
and ``convention`` its rotation. The properties call it with one query row at a time and keys at or before it, as a
decoder attends; real code's own methods (rotary-embedding-torch's ``rotate_queries_and_keys`` and
``rotate_queries_with_cached_keys``) reach it through ``ropespec.implementations.adapters.rotary_xpos``."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.contract import Fault
from ropespec.implementations.families.base import Bound, Form, Op, f64, i64, register


def op_xpos(host, fn, e, q, k, q_positions, k_positions):
    what = "xpos(q, k, q_positions, k_positions)"
    qn, qp = host.native(q, q_positions, e)
    kn, kp = host.native(k, k_positions, e)
    out = host.call(what, fn, qn, kn, qp, kp)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"{what}: returned {type(out).__name__}, expected the pair (q', k')", "shape")
    return (host.rows(out[0], e, (len(q), e.head_dim)), host.rows(out[1], e, (len(k), e.head_dim)))


class XposBound(Bound):
    def xpos(self, q: np.ndarray, k: np.ndarray, q_positions: np.ndarray, k_positions: np.ndarray):
        """xpos(q, k, q_positions, k_positions) as float64 (q', k')."""
        return self._op("xpos", f64(q), f64(k), i64(q_positions), i64(k_positions))


XPOS = Form("xpos", "apply", ((4,), "(q, k, q_positions, k_positions)"), ("xpos.*",),
            {"xpos": Op(op_xpos, "xpos(q, k, q_positions, k_positions)", lambda shape, q, k, qp, kp: [qp, kp])},
            lambda host, fn, e: op_xpos(host, fn, e, np.zeros((1, e.head_dim)), np.zeros((1, e.head_dim)),
                                        np.array([1]), np.array([0])), XposBound)
register(XPOS)
