"""Buggy twins of examples/position_ids.py's Qwen2.5-VL builder, each with one fault of a published bug; each
docstring names the word ropespec gives it first.

    ropespec check examples/position_ids_bugs.py:qwen2_5_vl_seconds_int --family position-ids --expect qwen2.5-vl-7b
"""

from __future__ import annotations

import numpy as np

from position_ids import TOKENS_PER_SECOND, build, clock, qwen2_5_vl, text_block, vision_block


def qwen2_5_vl_seconds_int(segments):
    """time-collapsed: second_per_grid_t cast to int before the clock (transformers PR #48669, lmms-eval #1393)."""
    return build(segments, lambda k, seg: int(k * int(seg[2]) * TOKENS_PER_SECOND) if seg[0] == "video" else 0)


def qwen2_5_vl_image_clocked(segments):
    """image-time-scaled: the start added before the clock multiplies, still images clocked too (transformers
    #45325)."""
    out, start = [], 0
    for seg in segments:
        if seg[0] == "text":
            p = text_block(start, seg[1])
        else:
            interval = seg[2] * TOKENS_PER_SECOND if seg[0] == "video" else TOKENS_PER_SECOND
            times = [int((start + k) * interval) - start for k in range(seg[1][0])]
            p = vision_block(start, seg[1], times)
        out.append(p)
        start = int(p.max()) + 1
    return np.concatenate(out)


def qwen2_5_vl_resume_spatial(segments):
    """resume-offset: after a vision block the text resumes at its start plus max(h, w), not past its last frame
    (transformers 5.24's get_rope_index: current_pos += max(grid_h, grid_w) // spatial_merge_size)."""
    out, start = [], 0
    for seg in segments:
        if seg[0] == "text":
            p = text_block(start, seg[1])
            start += seg[1]
        else:
            p = vision_block(start, seg[1], [clock(k, seg) for k in range(seg[1][0])])
            start += max(seg[1][1], seg[1][2])
        out.append(p)
    return np.concatenate(out)


def qwen2_5_vl_later_images_as_text(segments):
    """vision-as-text: only the first vision block gets its grid, later ones text positions (mlx-vlm #1282)."""
    out, start, seen = [], 0, 0
    for seg in segments:
        if seg[0] == "text" or seen:
            p = text_block(start, seg[1] if seg[0] == "text" else int(np.prod(seg[1])))
        else:
            p = vision_block(start, seg[1], [clock(k, seg) for k in range(seg[1][0])])
        seen += seg[0] != "text"
        out.append(p)
        start = int(p.max()) + 1
    return np.concatenate(out)


def qwen2_5_vl_hw_swapped(segments):
    """axes-swapped: the h and w position rows stacked in each other's place."""
    return qwen2_5_vl(segments)[:, [0, 2, 1]]


def qwen2_5_vl_batch_pads_counted(rows):
    """padding-shift: positions over the padded row, the pads counted as text (no attention mask)."""
    out, nxt = [], []
    for row in rows:
        pads = row[0][1] if row[0][0] == "pad" else 0
        real = qwen2_5_vl([s for s in row if s[0] != "pad"]) + pads
        out.append(np.concatenate([text_block(0, pads), real]))
        nxt.append(int(real.max()) + 1)
    return np.stack(out), np.array(nxt)


qwen2_5_vl_batch_pads_counted.batched = True


def qwen2_5_vl_batch_decode_at_length(rows):
    """decode-restart: decoding continues at the prompt's length, the rope_deltas dropped."""
    out, nxt = [], []
    for row in rows:
        pads = row[0][1] if row[0][0] == "pad" else 0
        real = [s for s in row if s[0] != "pad"]
        out.append(np.concatenate([np.zeros((pads, 3), dtype=np.int64), qwen2_5_vl(real)]))
        nxt.append(sum(s[1] if s[0] == "text" else int(np.prod(s[1])) for s in real))
    return np.stack(out), np.array(nxt)


qwen2_5_vl_batch_decode_at_length.batched = True
