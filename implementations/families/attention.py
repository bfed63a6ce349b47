"""The attention family: ``attend(q, k, v, positions, causal)`` (or a factory), q (n, n_heads * head_dim), k and v
(n, n_kv_heads * head_dim), heads contiguous; a factory returning ``prefill(q, k, v, positions)`` /
``step(q, k, v, position)`` objects is a KV-cache decoder."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.families.base import Bound, Form, Op, i64, register


def _qkv(host, e, q, k, v, positions):
    pos = i64(positions)
    nq, npos = host.native(q, pos, e)
    return nq, host.native(k, pos, e)[0], host.native(v, pos, e)[0], npos


def op_attend(host, fn, e, q, k, v, positions, causal):
    nq, nk, nv, npos = _qkv(host, e, q, k, v, positions)
    out = host.call("attend(q, k, v, positions, causal)", fn, nq, nk, nv, npos, causal)
    return host.rows(out, e, (len(positions), e.n_heads * e.head_dim))


def op_attend_prefill(host, fn, e, q, k, v, positions):
    nq, nk, nv, npos = _qkv(host, e, q, k, v, positions)
    return host.rows(host.call("prefill", fn.prefill, nq, nk, nv, npos), e, (len(positions), e.head_dim))


def op_attend_step(host, fn, e, q, k, v, position):
    nq, nk, nv, _ = _qkv(host, e, q, k, v, np.array([position]))
    return host.rows(host.call("step", fn.step, nq, nk, nv, int(position)), e, (1, e.head_dim))


def _warm(host, fn, e) -> None:
    q = np.full((2, e.n_heads * e.head_dim), 0.5)
    kv = np.full((2, e.n_kv_heads * e.head_dim), 0.5)
    op_attend(host, fn, e, q, kv, kv, np.array([0, 1], dtype=np.int64), True)


class AttentionBound(Bound):
    def attend(self, q, k, v, positions, causal: bool) -> np.ndarray:
        """attend(q, k, v, positions, causal) as float64 (n, n_heads * head_dim)."""
        return self._op("attend", q, k, v, i64(positions), bool(causal))


class AttentionDecoderBound(Bound):
    def attend_prefill(self, q, k, v, positions) -> np.ndarray:
        """The outputs of prefilling rows q, k, v at positions (causal)."""
        return self._op("attend_prefill", q, k, v, i64(positions))

    def attend_step(self, q, k, v, position: int) -> np.ndarray:
        """The output for one more row (shape (1, head_dim)) at ``position``."""
        return self._op("attend_step", q, k, v, int(position))


ATTENTION = Form("attention", "apply", ((5,), "(q, k, v, positions, causal)"), ("attention.*",),
                 {"attend": Op(op_attend, "attend(q, k, v, positions, causal)", lambda shape, q, k, v, positions, causal: [positions])}, _warm, AttentionBound,
                 decoder_invariants=("decode.attention-consistency",),
                 decoder_ops={"attend_prefill": Op(op_attend_prefill, "prefill", lambda shape, q, k, v, p: [p]),
                              "attend_step": Op(op_attend_step, "step", lambda shape, q, k, v, p: [np.array([p])])},
                 decoder_bound=AttentionDecoderBound)
register(ATTENTION)
