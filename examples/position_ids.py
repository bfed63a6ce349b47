"""Multimodal position ids as a user writes them from each model's get_rope_index, in numpy: plain functions
position_ids(segments) -> positions (n, 3), one row per token, columns t, h, w.

A sequence is a list of segments: ("text", n), ("image", (t, h, w)) and ("video", (t, h, w), seconds), the grids
after patch merging, the seconds one temporal grid step spans.

    ropespec check examples/position_ids.py:qwen2_vl --family position-ids --expect qwen2-vl-7b
    ropespec check examples/position_ids.py:qwen2_5_vl --family position-ids --expect qwen2.5-vl-7b

examples/position_ids_bugs.py holds their buggy twins, one for each fault ropespec names.
"""

from __future__ import annotations

import numpy as np

TOKENS_PER_SECOND = 2  # Qwen2.5-VL-7B's vision_config.tokens_per_second


def text_block(start, n):
    """n text tokens from start: one position on every axis."""
    return np.repeat(np.arange(start, start + n)[:, None], 3, axis=1)


def vision_block(start, grid, times):
    """A vision block's tokens, row-major over the merged grid: (start + times[k], start + i, start + j)."""
    t, h, w = grid
    tt, hh, ww = np.meshgrid(np.asarray(times, dtype=np.int64), np.arange(h), np.arange(w), indexing="ij")
    return np.stack([tt.ravel(), hh.ravel(), ww.ravel()], axis=1) + start


def build(segments, temporal):
    """Every segment starts at one past the largest position so far (st_idx = llm_pos_ids_list[-1].max() + 1)."""
    out, start = [], 0
    for seg in segments:
        if seg[0] == "text":
            p = text_block(start, seg[1])
        else:
            p = vision_block(start, seg[1], [temporal(k, seg) for k in range(seg[1][0])])
        out.append(p)
        start = int(p.max()) + 1
    return np.concatenate(out).astype(np.int64)


# -- Qwen2-VL: one temporal position per grid step --------------------------------------------------------------------
def qwen2_vl(segments):
    return build(segments, lambda k, seg: k)


# -- Qwen2.5-VL: video time follows the clock, k x second_per_grid_t x tokens_per_second, truncated ----------------
def clock(k, seg):
    return int(k * seg[2] * TOKENS_PER_SECOND) if seg[0] == "video" else 0


def qwen2_5_vl(segments):
    return build(segments, clock)


# -- Qwen3-VL and GLM-4.1V: each frame its own block after its timestamp text (t = 1) ------------------------------------
def frames(segments):
    """A video of t frames is t blocks of one frame each."""
    out = []
    for seg in segments:
        if seg[0] == "video":
            out += [("video", (1,) + tuple(seg[1][1:]), seg[2])] * seg[1][0]
        else:
            out.append(seg)
    return out


def qwen3_vl(segments):
    return build(frames(segments), lambda k, seg: 0)


def glm4v(segments):
    """GLM-4.1V's get_rope_index follows Qwen3-VL's rule: frames after their timestamps."""
    return qwen3_vl(segments)


# -- a batched builder, as get_rope_index is: left-padded rows, and where decoding continues -----------------------------
def qwen2_5_vl_batch(rows):
    """rows of one length, each left-padded by a ("pad", k) segment: positions (batch, n, 3) (the pads at 0, as the
    attention mask leaves them) and each row's next position, one past its largest (rope_deltas)."""
    n = sum(s[1] if s[0] in ("text", "pad") else int(np.prod(s[1])) for s in rows[0])
    out, nxt = np.zeros((len(rows), n, 3), dtype=np.int64), []
    for r, row in enumerate(rows):
        pads = row[0][1] if row[0][0] == "pad" else 0
        real = qwen2_5_vl([s for s in row if s[0] != "pad"])
        out[r, pads:] = real
        nxt.append(int(real.max()) + 1)
    return out, np.array(nxt, dtype=np.int64)


qwen2_5_vl_batch.batched = True
