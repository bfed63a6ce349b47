"""ropespec's own positional biases in numpy, float64: ALiBi (``alibi``, a factory of alibi(n_heads, q_positions,
k_positions) for the expectation's rule, one sequence or a batch of them: the nd and bhqk layouts) T5's bucket function (``t5_bucket``, plain) and its bias lookup (``t5_lookup``), written from the
definitions in ropespec.spec.definitions."""

from __future__ import annotations

import math

import numpy as np

from ropespec.spec import definitions


def alibi(expect):
    """make(expect): the bias -m_h (i - j) (or -m_h |i - j|) with the rule's slopes, float64."""
    if expect.dtype != "float64":
        raise NotImplementedError(f"the shipped ALiBi computes float64, not {expect.dtype}")

    def bias(n_heads, q_positions, k_positions):
        """(n_heads, n_q, n_k) for positions (n,); (batch, n_heads, n_q, n_k) for positions (batch, n) (bhqk)."""
        m = np.array(definitions.alibi_slopes(int(n_heads), lambda e: 2.0**e, lambda a, b: a / b,
                                              expect.params("alibi").alibi_bias_max))[:, None, None]
        i = np.asarray(q_positions, dtype=np.float64)[..., None, :, None]
        j = np.asarray(k_positions, dtype=np.float64)[..., None, None, :]
        return definitions.alibi_bias(m, i, j, expect.params("alibi").bias_symmetric)

    return bias


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's bucket of every relative position (key - query), as ropespec.spec.definitions.t5_bucket, in float64 logs."""
    rel = np.asarray(relative_position, dtype=np.int64)
    log_ratio = lambda a, b: math.log(a / b)  # noqa: E731
    out = [definitions.t5_bucket(int(d), bidirectional, num_buckets, max_distance, log_ratio, math.floor)
           for d in rel.ravel()]
    return np.array(out, dtype=np.int64).reshape(rel.shape)


def t5_lookup(table, q_positions, k_positions, bidirectional=True, max_distance=128):
    """T5's bias lookup: each head's entry of ``table`` (num_buckets, n_heads) at the bucket of key - query,
    (n_heads, n_q, n_k) in the table's dtype (transformers' compute_bias, for any positions)."""
    table = np.asarray(table)
    rel = np.asarray(k_positions, dtype=np.int64)[None, :] - np.asarray(q_positions, dtype=np.int64)[:, None]
    return table[t5_bucket(rel, bidirectional, table.shape[0], max_distance)].transpose(2, 0, 1)


def xpos(expect):
    """make(expect): xpos(q, k, q_positions, k_positions), float64: RoPE of ropespec.spec.definitions with queries scaled by
    zeta_i^(m / scale_base) and keys by zeta_i^(-n / scale_base) (no centre)."""
    if expect.dtype != "float64":
        raise NotImplementedError(f"the shipped xPos computes float64, not {expect.dtype}")
    r = expect.rotary_dim
    zeta = np.array([definitions.xpos_zeta(i, r, lambda a, b: a / b) for i in range(r // 2)])
    theta = expect.rope_theta ** (-np.arange(0, r, 2) / r)
    pairs = list(zip(expect.pairs(), expect.out_pairs()))

    def turn(x, positions, sign):
        x = np.asarray(x, dtype=np.float64)
        out = x.copy()
        p = np.asarray(positions, dtype=np.float64)[:, None]
        scale = zeta[None] ** (sign * p / expect.params("xpos").xpos_scale_base)
        for i, ((a, b), (oa, ob)) in enumerate(pairs):
            ya, yb = definitions.rotate(x[:, a], x[:, b], np.cos(p[:, 0] * theta[i]), np.sin(p[:, 0] * theta[i]))
            out[:, oa], out[:, ob] = ya * scale[:, i], yb * scale[:, i]
        return out

    def apply(q, k, q_positions, k_positions):
        return turn(q, q_positions, 1), turn(k, k_positions, -1)

    return apply
