"""One parametrised numpy ALiBi and one T5 bucket function that zoo members bend in exactly one place each; with no
keywords each computes its family correctly, in float64."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ropespec.spec.definitions import alibi_slopes as _rule


def alibi_slopes(n_heads: int, bias_max: float = 8.0) -> np.ndarray:
    """The rule's slopes in float64 (ropespec.spec.definitions.alibi_slopes, each within an ulp)."""
    return np.array(_rule(int(n_heads), lambda e: 2.0**e, lambda a, b: a / b, bias_max), dtype=np.float64)


def alibi(expect, *, slopes: Callable[[int], np.ndarray] | None = None,
          bias: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None):
    """alibi(n_heads, q_positions, k_positions) for ``expect``'s rule, with one bug injected: ``slopes(n_heads)``
    instead of the rule's, or ``bias(m (h, 1, 1), i (1, n_q, 1), j (1, 1, n_k))`` instead of -m (i - j) (or
    -m |i - j|)."""

    def make_bias(n_heads, q_positions, k_positions):
        m = (slopes or (lambda h: alibi_slopes(h, expect.params("alibi").alibi_bias_max)))(int(n_heads))[:, None, None]
        i = np.asarray(q_positions, dtype=np.float64)[None, :, None]
        j = np.asarray(k_positions, dtype=np.float64)[None, None, :]
        if bias is not None:
            return np.asarray(bias(m, i, j), dtype=np.float64)
        return -m * (np.abs(i - j) if expect.params("alibi").bias_symmetric else i - j)

    return make_bias


def alibi_batched(expect, *, heads_first: bool = False, first_row: bool = False):
    """alibi(n_heads, q_positions (batch, n_q), k_positions (batch, n_k)) -> (batch, n_heads, n_q, n_k), the bhqk
    layout, with one bug injected: ``heads_first`` builds (n_heads, batch, ...) and reshapes it to (batch, n_heads,
    ...), ``first_row`` computes every row from row 0's positions."""
    one = alibi(expect)

    def make_bias(n_heads, q_positions, k_positions):
        q, k = np.asarray(q_positions), np.asarray(k_positions)
        rows = [one(n_heads, q[0 if first_row else r], k[0 if first_row else r]) for r in range(len(q))]
        if heads_first:
            return np.stack(rows, axis=1).reshape(len(q), int(n_heads), q.shape[1], k.shape[1])
        return np.stack(rows)

    return make_bias


def t5_bucket(*, max_exact: Callable[[int, int], int] | None = None, signed: int = 1, saturate: bool = True,
              wrap: bool = False):
    """bucket(relative_position, bidirectional, num_buckets, max_distance), T5's, with one bug injected:
    ``max_exact(n, num_buckets)`` where the exact buckets end (correct: n // 2 of the n buckets of one sign),
    ``signed`` -1 to read the distance as query - key, ``saturate`` False to drop the min with the last bucket,
    ``wrap`` to take the log-spaced bucket modulo n instead."""

    def bucket(relative_position, bidirectional, num_buckets, max_distance):
        rp = signed * np.asarray(relative_position, dtype=np.int64)
        n, ret = num_buckets, np.zeros_like(rp)
        if bidirectional:
            n //= 2
            ret = ret + (rp > 0) * n
            rp = np.abs(rp)
        else:
            rp = -np.minimum(rp, 0)
        me = (max_exact or (lambda nn, nb: nn // 2))(n, num_buckets)
        with np.errstate(divide="ignore"):
            large = me + (np.log(np.maximum(rp, 1).astype(np.float32) / me)
                          / np.float32(math.log(max_distance / me)) * (n - me)).astype(np.int64)
        if wrap:
            large = large % n
        elif saturate:
            large = np.minimum(large, n - 1)
        return ret + np.where(rp < me, rp, large)

    return bucket


def xpos(expect, *, q_power: Callable | None = None, k_power: Callable | None = None):
    """xpos(q, k, q_positions, k_positions) for ``expect``, numpy float64 (rotary-embedding-torch's layout of the
    decay: zeta_i over the rotary dims, exponents centred on the call's middle position), with one bug injected:
    ``q_power(p, centre)`` and ``k_power(p, centre)`` the exponents' numerators (correct: p - centre and -(p - centre))."""
    r = expect.rotary_dim
    zeta = (np.arange(0, r, 2) + 0.4 * r) / (1.4 * r)
    theta = expect.rope_theta ** (-np.arange(0, r, 2) / r)
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))

    def turn(x, p, power):
        x = np.asarray(x, dtype=np.float64).copy()
        ang = np.asarray(p, dtype=np.float64)[:, None] * theta[None]
        s = zeta[None] ** (power[:, None] / expect.params("xpos").xpos_scale_base)
        xa, xb = x[:, a].copy(), x[:, b].copy()
        x[:, a] = (xa * np.cos(ang) - xb * np.sin(ang)) * s
        x[:, b] = (xa * np.sin(ang) + xb * np.cos(ang)) * s
        return x

    def apply(q, k, q_positions, k_positions):
        qp, kp = np.asarray(q_positions), np.asarray(k_positions)
        centre = (max(int(qp.max()), int(kp.max())) + 1) // 2
        pq = (q_power or (lambda p, c: p - c))(qp.astype(np.float64), centre)
        pk = (k_power or (lambda p, c: -(p - c)))(kp.astype(np.float64), centre)
        return turn(q, qp, pq), turn(k, kp, pk)

    return apply


def t5_lookup(*, sign: int = 1, reversed_heads: bool = False, from_first_query: bool = False):
    """lookup(table, q_positions, k_positions, bidirectional, max_distance), T5's compute_bias for any positions,
    with one bug injected: ``sign`` -1 for query - key, ``reversed_heads`` for the table's columns in reverse,
    ``from_first_query`` for queries counted from the first one (a decoding step's offset dropped)."""
    bucket = t5_bucket()

    def lookup(table, q_positions, k_positions, bidirectional=True, max_distance=128):
        table = np.asarray(table)
        q = np.asarray(q_positions, dtype=np.int64)
        if from_first_query:
            q = q - q.min()
        rel = sign * (np.asarray(k_positions, dtype=np.int64)[None, :] - q[:, None])
        out = table[bucket(rel, bidirectional, table.shape[0], max_distance)].transpose(2, 0, 1)
        return out[::-1].copy() if reversed_heads else out

    return lookup
