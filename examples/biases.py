"""Positional biases written as a user would, from each one's published code: ALiBi (Press et al.'s get_slopes and
the causal bias, over one sequence or a batch), its slopes alone, T5's relative-position buckets and its bias lookup (transformers' T5Attention), and xPos (RoPE with
Sun et al.'s decay). README runs them:

    ropespec check examples/biases.py:alibi examples/biases.py:slopes --family alibi
    ropespec check examples/biases.py:alibi_batched --family alibi --layout bhqk
    ropespec check examples/biases.py:bucket examples/biases.py:lookup --family t5-bias
    ropespec check examples/biases.py:xpos --family xpos --expect '{"head_dim": 64, "convention": "interleaved"}'
"""

import math

import numpy as np


def get_slopes(n):
    """Press et al.'s slopes: a geometric sequence for a power of two, interleaved with the next one's otherwise."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def slopes(n_heads):
    return np.array(get_slopes(n_heads), dtype=np.float32)


def alibi(n_heads, q_positions, k_positions):
    """The causal bias -m_h (i - j) of every head, float32."""
    m = slopes(n_heads)[:, None, None]
    distance = np.asarray(q_positions)[None, :, None] - np.asarray(k_positions)[None, None, :]
    return (-m * distance).astype(np.float32)


def alibi_batched(n_heads, q_positions, k_positions):
    """A batch of sequences, each with its own positions (batch, n): the bias (batch, n_heads, n_q, n_k), float32."""
    m = slopes(n_heads)[None, :, None, None]
    distance = np.asarray(q_positions)[:, None, :, None] - np.asarray(k_positions)[:, None, None, :]
    return (-m * distance).astype(np.float32)


def bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's bucket of relative_position = key - query: exact below max_exact, log-spaced to max_distance."""
    rp = np.asarray(relative_position)
    ret = np.zeros_like(rp)
    if bidirectional:
        num_buckets //= 2
        ret += (rp > 0) * num_buckets
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    max_exact = num_buckets // 2
    large = max_exact + (np.log(np.maximum(rp, 1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).astype(np.int64)
    return ret + np.where(rp < max_exact, rp, np.minimum(large, num_buckets - 1))


def lookup(table, q_positions, k_positions, bidirectional=True, max_distance=128):
    """T5's bias: each head's learned entry of table (num_buckets, n_heads) at the bucket of key - query."""
    relative = np.asarray(k_positions)[None, :] - np.asarray(q_positions)[:, None]
    buckets = bucket(relative, bidirectional, len(table), max_distance)
    return np.asarray(table)[buckets].transpose(2, 0, 1)  # (n_heads, n_q, n_k)


def xpos(q, k, q_positions, k_positions):
    """xPos (Sun et al.): RoPE over the head, interleaved pairs, base 10000, queries scaled by zeta_i^(m / 512) and
    keys by zeta_i^(-n / 512), zeta_i = (2i / d + 0.4) / 1.4."""
    d = q.shape[-1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    zeta = (np.arange(0, d, 2) / d + 0.4) / 1.4

    def turn(x, p, sign):
        ang = np.asarray(p, dtype=np.float64)[:, None] * theta
        scale = zeta ** (sign * np.asarray(p, dtype=np.float64)[:, None] / 512)
        x1, x2 = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x, dtype=np.float64)
        out[:, 0::2] = (x1 * np.cos(ang) - x2 * np.sin(ang)) * scale
        out[:, 1::2] = (x1 * np.sin(ang) + x2 * np.cos(ang)) * scale
        return out.astype(np.float32)

    return turn(q, q_positions, 1), turn(k, k_positions, -1)
