"""Builders that zoo members of the other families (sinusoidal, learned, attention) bend in one place."""

from __future__ import annotations

import numpy as np

from ropespec.implementations import learned, sinusoidal
from ropespec.implementations.numpy_rope import make as make_rope
from ropespec.spec.angles import sinusoidal_layout


def pe(expect, *, positions_map=None, post=None, thetas=None, swap=False):
    """A numpy sinusoidal pe(positions, d) with one hook: positions_map(p), post(pe, p), an explicit
    thetas(d) table, or swap (cos where sin belongs)."""
    correct = sinusoidal.make(expect)

    def f(positions, d):
        p = np.asarray(positions)
        q = positions_map(p) if positions_map is not None else p
        if thetas is not None:
            ang = np.asarray(q, dtype=np.float64)[:, None] * thetas(d)[None, :]
            out = sinusoidal_layout(np.sin(ang), np.cos(ang), expect.convention)
        else:
            out = correct(q, d)
        if swap:
            out = out.reshape(len(p), d // 2, 2)[:, :, ::-1].reshape(len(p), d) if expect.convention == "interleaved" \
                else np.concatenate([out[:, d // 2 :], out[:, : d // 2]], 1)
        return post(out, p) if post is not None else out

    return f


def table(expect, *, index=None, rows=None, post=None):
    """A learned table with one hook: index(p, max_len) -> row, rows (the number allocated), post(out, p)."""
    t = learned.Table(rows or expect.max_position, expect.head_dim)
    t.max_len = expect.max_position

    class Hooked:
        weight = t.weight

        @property
        def num_parameters(self):
            return int(t.weight.size)

        def __call__(self, positions):
            p = np.asarray(positions, dtype=np.int64)
            if index is None:
                return post(t(p), p) if post is not None else t(p)
            out = t.weight[index(p, t.max_len)].copy()
            return post(out, p) if post is not None else out

    return Hooked()


def attend(expect, *, rotate_v=False, causal=None, positions_map=None, additive=False):
    """One head of attention with one hook."""
    rope = make_rope(expect.replace(dtype="float64"))
    pe_ = sinusoidal.make(expect.replace(dtype="float64"))

    def f(q, k, v, positions, is_causal):
        q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
        p = np.asarray(positions)
        p = positions_map(p) if positions_map is not None else p
        if additive:
            qr, kr = q + pe_(p, q.shape[1]), k + pe_(p, q.shape[1])
        else:
            qr, kr = rope(q, p), rope(k, p)
        vv = rope(v, p) if rotate_v else v
        scores = qr @ kr.T / np.sqrt(q.shape[1])
        if (is_causal if causal is None else causal):
            scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (w / w.sum(axis=1, keepdims=True)) @ vv

    return f
