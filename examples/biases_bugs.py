"""Buggy twins of examples/biases.py, each with one fault a real port has had; the first word of each docstring is
the diagnosis ropespec gives it (README runs them)."""

import math

import numpy as np

from biases import alibi, bucket, get_slopes, lookup, xpos


def alibi_geometric(n_heads, q_positions, k_positions):
    """slopes: 2^(-8 (h + 1) / H) for every head count, the rule of a power of two where 12 heads is none."""
    m = (2.0 ** (-8 * (np.arange(n_heads) + 1) / n_heads)).astype(np.float32)[:, None, None]
    return (-m * (np.asarray(q_positions)[None, :, None] - np.asarray(k_positions)[None, None, :])).astype(np.float32)


def alibi_reversed(n_heads, q_positions, k_positions):
    """slope-order: the slopes handed to the heads last first."""
    m = np.array(get_slopes(n_heads)[::-1], dtype=np.float32)[:, None, None]
    return (-m * (np.asarray(q_positions)[None, :, None] - np.asarray(k_positions)[None, None, :])).astype(np.float32)


def alibi_sign(n_heads, q_positions, k_positions):
    """bias-sign: +m (i - j), the distance's sign flipped."""
    return -alibi(n_heads, q_positions, k_positions)


def alibi_float16_keys(n_heads, q_positions, k_positions):
    """bias-precision: BLOOM's form m j, formed in float16, handed back as float32."""
    m = np.array(get_slopes(n_heads), dtype=np.float16)[:, None, None]
    per_key = (m * np.asarray(k_positions, dtype=np.float16)[None, None, :]).astype(np.float32)
    return np.broadcast_to(per_key, (n_heads, len(q_positions), len(k_positions))).copy()


def alibi_batched_heads_first(n_heads, q_positions, k_positions):
    """layout: the batch built heads first, (n_heads, batch, ...), and reshaped to (batch, n_heads, ...)."""
    per_row = [alibi(n_heads, q, k) for q, k in zip(q_positions, k_positions)]
    return np.stack(per_row, axis=1).reshape(len(per_row), n_heads, *per_row[0].shape[1:])


def bucket_swapped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """halves-swapped: the relative position read as query - key."""
    return bucket(-np.asarray(relative_position), bidirectional, num_buckets, max_distance)


def bucket_unsaturated(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """bucket-range: the min with the last bucket left out."""
    rp = np.asarray(relative_position)
    n, ret = num_buckets, np.zeros_like(rp)
    if bidirectional:
        n //= 2
        ret += (rp > 0) * n
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    max_exact = n // 2
    large = max_exact + (np.log(np.maximum(rp, 1) / max_exact) / math.log(max_distance / max_exact)
                         * (n - max_exact)).astype(np.int64)
    return ret + np.where(rp < max_exact, rp, large)


def lookup_query_minus_key(table, q_positions, k_positions, bidirectional=True, max_distance=128):
    """halves-swapped: the relative position taken as query - key in the lookup."""
    return lookup(table, k_positions, q_positions, bidirectional, max_distance).transpose(0, 2, 1)


def xpos_keys_like_queries(q, k, q_positions, k_positions):
    """xpos-scale: the keys scaled by zeta^(n / 512) like the queries (one scale for both)."""
    rq, _ = xpos(q, k, q_positions, k_positions)
    rk, _ = xpos(k, k, k_positions, k_positions)  # the keys turned and scaled as the queries are
    return rq, rk


def xpos_decay_reversed(q, k, q_positions, k_positions):
    """xpos-decay: the queries take zeta^(-m / 512) and the keys zeta^(n / 512)."""
    rk_as_q, rq_as_k = xpos(k, q, k_positions, q_positions)
    return rq_as_k, rk_as_q
