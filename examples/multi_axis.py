"""Multi-axis RoPE as a user writes it from each model's code, in numpy: plain functions f(x, positions) with x
(n, head_dim) and positions (n, A), column a the token's position on axis a.

    ropespec check examples/multi_axis.py:qwen2_vl --expect qwen2-vl-7b
    ropespec check examples/multi_axis.py:qwen3_vl --expect qwen3-vl-8b
    ropespec check examples/multi_axis.py:flux --expect flux.1-dev
    ropespec check examples/multi_axis.py:dinov3 --expect dinov3-vitl16
    ropespec check examples/multi_axis.py:ltx_video --expect examples/ltx_video_48.json
    ropespec check examples/multi_axis.py:hunyuan_xdrope --expect hunyuanocr

examples/multi_axis_bugs.py holds their buggy twins, one for each fault ropespec names.
"""

from __future__ import annotations

import numpy as np


def rotate_half(x):
    """transformers' rotate_half: (x1, x2) -> (-x2, x1) over the two halves."""
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def mrope_freqs(positions, head_dim: int, theta: float):
    """Qwen2VLRotaryEmbedding's angles before the merge: (3, n, head_dim/2), one table per axis (t, h, w), every
    axis on the one ladder theta^(-2j/d)."""
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2) / head_dim)
    return positions.T[:, :, None] * inv_freq


def apply_half(x, angles):
    """transformers' apply_rotary_pos_emb with the table cat(angles, angles): half pairs (i, i + d/2)."""
    emb = np.concatenate([angles, angles], axis=-1)
    return (x * np.cos(emb) + rotate_half(x) * np.sin(emb)).astype(x.dtype)


# -- Qwen2-VL / Qwen2.5-VL: one ladder, chunked sections t | h | w ------------------------------------------------------
def qwen2_vl_merge(freqs, sections):
    """recomposition_frequencies: the first sections[0] pairs from t's table, the next sections[1] from h's, ..."""
    split = np.split(freqs, np.cumsum(sections)[:-1], axis=-1)
    return np.concatenate([m[i % 3] for i, m in enumerate(split)], axis=-1)


def qwen2_vl(x, positions, sections=(16, 24, 24), theta=1e6):
    return apply_half(x, qwen2_vl_merge(mrope_freqs(positions, x.shape[1], theta), sections))


# -- Qwen3-VL: one ladder, sections interleaved t h w t h w ... ------------------------------------------------------------
def qwen3_vl_merge(freqs, sections):
    """Qwen3-VL's recomposition_frequencies: t's table, with pair j taken from h's where j = 1 mod 3 and j < 3 s_h,
    from w's where j = 2 mod 3 and j < 3 s_w."""
    merged = freqs[0].copy()
    for axis, offset in ((1, 1), (2, 2)):
        idx = slice(offset, sections[axis] * 3, 3)
        merged[..., idx] = freqs[axis][..., idx]
    return merged


def qwen3_vl(x, positions, sections=(24, 20, 20), theta=5e6):
    return apply_half(x, qwen3_vl_merge(mrope_freqs(positions, x.shape[1], theta), sections))


# -- FLUX: one ladder per axis, interleaved pairs --------------------------------------------------------------------
def get_1d_rotary_pos_embed(dim: int, pos, theta: float = 10000.0):
    """diffusers' get_1d_rotary_pos_embed(use_real=True, repeat_interleave_real=True): cos and sin (n, dim), each
    pair's value at both of its dims."""
    freqs = 1.0 / theta ** (np.arange(0, dim, 2) / dim)
    angles = np.outer(pos, freqs)
    return np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1)


def flux_pos_embed(ids, axes_dim=(16, 56, 56), theta=10000.0):
    """FluxPosEmbed.forward: one 1-D RoPE table per axis (column of ids), concatenated."""
    tables = [get_1d_rotary_pos_embed(d, ids[:, i], theta) for i, d in enumerate(axes_dim)]
    return np.concatenate([c for c, _ in tables], axis=1), np.concatenate([s for _, s in tables], axis=1)


def apply_rotary_emb(x, cos, sin):
    """diffusers' apply_rotary_emb(use_real_unbind_dim=-1): interleaved pairs (2i, 2i + 1)."""
    x_real, x_imag = x[:, 0::2], x[:, 1::2]
    rotated = np.stack([-x_imag, x_real], axis=-1).reshape(x.shape)
    return (x * cos + rotated * sin).astype(x.dtype)


def flux(x, positions, axes_dim=(16, 56, 56), theta=10000.0):
    return apply_rotary_emb(x, *flux_pos_embed(positions, axes_dim, theta))


# -- DINOv3: one ladder of periods per axis over patch centres in [-1, 1], angles 2 pi coordinate / period ----------------
def dinov3_patch_coords(rows, cols, grid: int = 14):
    """get_patches_center_coordinates for the patches asked: ((i + 0.5) / H) 2 - 1 on each axis, in [-1, 1]."""
    return np.stack([(rows + 0.5) / grid, (cols + 0.5) / grid], axis=-1) * 2.0 - 1.0


def dinov3(x, positions, base=100.0, grid=14):
    """facebookresearch/dinov3's RopePositionEmbedding and rope_apply at each patch (row, column) of a grid x grid
    image: periods base^(2k/(d/2)), angles 2 pi coord / period per axis, [h | w] tiled twice, half pairs."""
    d = x.shape[1]
    periods = base ** (2 * np.arange(d // 4) / (d // 2))
    coords = dinov3_patch_coords(positions[:, 0], positions[:, 1], grid)
    angles = (2 * np.pi * coords[:, :, None] / periods[None, None, :]).reshape(len(x), d // 2)
    return apply_half(x, angles)


# -- LTX-Video: ascending ladders theta^linspace(0, 1, K), one pair of each axis per frequency, coordinates in [-1, 1] -----
def ltx_video(x, positions, theta=10000.0, bases=(20.0, 2048.0, 2048.0)):
    """diffusers' LTXVideoRotaryPosEmbed(video_coords=...) and transformer_ltx.apply_rotary_emb, for a dim that is a
    multiple of 6 (no front padding): grid = coords / base per axis, freqs = theta^linspace(0, 1, dim // 6) pi/2,
    angles freqs (2 grid - 1), (n, 3, K) transposed to (n, K, 3) and flattened: pair j = 3k + a."""
    d = x.shape[1]
    freqs = theta ** np.linspace(0.0, 1.0, d // 6) * np.pi / 2
    grid = positions / np.array(bases)  # (n, 3)
    angles = (freqs[None, None, :] * (grid[:, :, None] * 2 - 1)).transpose(0, 2, 1).reshape(len(x), d // 2)
    c, s = np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1)
    return apply_rotary_emb(x, c, s)


# -- HunYuan's XD-RoPE (vLLM's XDRotaryEmbedding): four axes p | w | h | t of one NTK-alpha ladder, chunked, half pairs --
def xd_merge(freqs, sections):
    """XDRotaryEmbedding.forward_native: the cache's cos and sin split into sections of pairs, section i from axis i."""
    split = np.split(freqs, np.cumsum(sections)[:-1], axis=-1)
    return np.concatenate([m[i] for i, m in enumerate(split)], axis=-1)


def hunyuan_xdrope(x, positions, sections=(16, 16, 16, 16), theta=1e4, alpha=1000.0):
    """DynamicNTKAlphaRotaryEmbedding's base theta alpha^(d/(d - 2)) and its ladder over the whole head, each axis's
    angles (positions (n, 4): P, W, H, T), merged by sections, turned neox-style (half pairs)."""
    d = x.shape[1]
    base = theta * alpha ** (d / (d - 2))
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    return apply_half(x, xd_merge(positions.T[:, :, None] * inv_freq, sections))
