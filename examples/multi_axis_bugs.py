"""The buggy twins of examples/multi_axis.py, one for each fault of multi-axis RoPE that ropespec names (the word
after each name; tests/test_multi_axis_examples.py checks each fails with its word and no other):

    ropespec check examples/multi_axis_bugs.py:qwen3_vl_chunked --expect qwen3-vl-8b   # axes-chunked, exit 1
"""

from __future__ import annotations

import numpy as np

from multi_axis import (apply_half, apply_rotary_emb, dinov3, flux, mrope_freqs, qwen2_vl, qwen2_vl_merge, qwen3_vl_merge,
                        rotate_half)


def qwen3_vl_chunked(x, positions):
    """axes-chunked: Qwen3-VL's sections merged in Qwen2-VL's chunks (MNN #4133, mlx-vlm #576)."""
    return apply_half(x, qwen2_vl_merge(mrope_freqs(positions, x.shape[1], 5e6), (24, 20, 20)))


def qwen2_vl_interleaved(x, positions):
    """axes-interleaved: Qwen2-VL's sections merged by Qwen3-VL's interleaving code."""
    return apply_half(x, qwen3_vl_merge(mrope_freqs(positions, x.shape[1], 1e6), (16, 24, 24)))


def qwen2_vl_sections_reversed(x, positions):
    """axes-sections: the sections read in reverse, [24, 24, 16]."""
    return qwen2_vl(x, positions, sections=(24, 24, 16))


def flux_hw_swapped(x, positions):
    """axes-swapped: the row and column ids read in each other's place."""
    return flux(x, positions[:, [0, 2, 1]])


def qwen2_vl_per_axis(x, positions):
    """ladder-per-axis: each section its own ladder theta^(-2k/d_a), as FLUX's axes have."""
    return apply_half(x, np.concatenate([np.outer(positions[:, a], 1e6 ** (-np.arange(0, 2 * s, 2) / (2 * s)))
                                         for a, s in enumerate((16, 24, 24))], axis=1))


def flux_one_ladder(x, positions):
    """ladder-shared: one ladder theta^(-2j/128) over every pair, the axes' dims taking its chunks in turn."""
    freqs = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    owner = np.repeat([0, 1, 2], [8, 28, 28])
    angles = positions[:, owner] * freqs
    return apply_rotary_emb(x, np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1))


def qwen2_vl_text_only(x, positions):
    """axis-ignored: every axis read from the temporal column, as text-only code does."""
    return qwen2_vl(x, np.repeat(positions[:, :1], 3, axis=1))


def flux_one_based(x, positions):
    """axis-offset: the image's rows counted from 1."""
    return flux(x, positions + np.array([0, 1, 0]))


def dinov3_corners(x, positions):
    """position-offset: the patches' corners, i / H, for their centres, (i + 0.5) / H (every axis half a patch early)."""
    return dinov3(x, positions - 0.5)


def ltx_video_chunked(x, positions):
    """axes-chunked: LTX-Video's angles flattened without its transpose, (n, 3, K): each axis's K pairs in a chunk."""
    d = x.shape[1]
    freqs = 10000.0 ** np.linspace(0.0, 1.0, d // 6) * np.pi / 2
    grid = positions / np.array([20.0, 2048.0, 2048.0])
    angles = (freqs[None, None, :] * (grid[:, :, None] * 2 - 1)).reshape(len(x), d // 2)
    return apply_rotary_emb(x, np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1))


def qwen2_vl_bshd_row0(x, positions):
    """layout (--layout bshd): every batch row rotated by batch row 0's position vectors (Liger-Kernel #461)."""
    b, s, h, d = x.shape
    pos = np.broadcast_to(positions[:1], positions.shape)
    rows = np.repeat(pos.reshape(b * s, 3), h, axis=0)
    return qwen2_vl(x.reshape(-1, d), rows).reshape(x.shape)


def hunyuan_vl_sections_doubled(x, positions, sections=(16, 16, 16, 16)):
    """not-a-rotation: XD-RoPE's per-dim table cat(freqs, freqs) split by [2 s for s in sections] (transformers 5.24's
    HunYuanVLRotaryEmbedding), so pair (j, j + 64) takes its cos from one axis and its sin from another."""
    d = x.shape[1]
    inv_freq = 1.0 / (1e4 * 1000.0 ** (d / (d - 2))) ** (np.arange(0, d, 2) / d)
    freqs = positions.T[:, :, None] * inv_freq
    emb = np.concatenate([freqs, freqs], axis=-1)  # (4, n, d)
    split = np.split(emb, np.cumsum([2 * s for s in sections])[:-1], axis=-1)
    merged = np.concatenate([m[i] for i, m in enumerate(split)], axis=-1)
    return (x * np.cos(merged) + rotate_half(x) * np.sin(merged)).astype(x.dtype)
