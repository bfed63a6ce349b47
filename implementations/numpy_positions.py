"""A multimodal position-id builder in numpy, batched as transformers' get_rope_index is: ``make(expect)`` returns
``position_ids(rows) -> (positions (batch, n, 3), next (batch,))`` under the expectation's ``video_time`` (Qwen2-VL's
grid steps, Qwen2.5-VL's clock, Qwen3-VL's frames). Left pads get position 0 (the attention mask's), each row is
built alone, and decoding goes on at one past a row's largest position."""

from __future__ import annotations

import numpy as np


def _steps(seg, rule, tps) -> np.ndarray:
    """A vision block's temporal offsets: one per grid step (grid), the clock truncated (seconds), 0 (frames)."""
    t = seg[1][0]
    if seg[0] == "video" and rule == "seconds":
        return np.floor(np.arange(t) * (seg[2] * tps)).astype(np.int64)
    return np.arange(t) if seg[0] == "video" and rule == "grid" else np.zeros(t, dtype=np.int64)


def _row(segments, rule, tps) -> np.ndarray:
    parts, start = [], 0
    for seg in segments:
        if seg[0] == "video" and rule == "frames" and seg[1][0] > 1:  # one block per frame
            segments_of_frames = [("video", (1,) + tuple(seg[1][1:]), seg[2])] * seg[1][0]
            block = _row(segments_of_frames, rule, tps) + start
        elif seg[0] == "text":
            block = np.full((seg[1], 3), start, dtype=np.int64) + np.arange(seg[1])[:, None]
        else:
            _, h, w = seg[1]
            idx = np.indices((len(_steps(seg, rule, tps)), h, w)).reshape(3, -1).T
            block = np.stack([_steps(seg, rule, tps)[idx[:, 0]], idx[:, 1], idx[:, 2]], axis=1) + start
        parts.append(block)
        start = int(block.max()) + 1
    return np.concatenate(parts)


def make(expect):
    if expect.params("position-ids").video_time is None:
        raise NotImplementedError("a position-id builder follows a model's rules: an expectation with video_time")
    rule, tps = expect.params("position-ids").video_time, expect.params("position-ids").tokens_per_second

    def position_ids(rows):
        n = sum(s[1] if s[0] in ("text", "pad") else int(np.prod(s[1])) for s in rows[0])
        out, nxt = np.zeros((len(rows), n, 3), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
        for r, row in enumerate(rows):
            real = _row([s for s in row if s[0] != "pad"], rule, tps)
            out[r, n - len(real):] = real
            nxt[r] = real.max() + 1
        return out, nxt

    position_ids.batched = True
    return position_ids
