"""The position ids of a multimodal sequence, defined once: what a builder such as Qwen2-VL's ``get_rope_index`` must
give each token of a sequence of text, images and videos before the multi-axis RoPE turns it.

A sequence is a list of **segments**, in order, each a plain tuple (what a builder under test receives):

* ``("text", n)``: a run of n text tokens;
* ``("image", (t, h, w))``: an image's tokens, its grid after patch merging (t = 1 for a still image);
* ``("video", (t, h, w), seconds)``: a video's tokens, its merged grid and the seconds one temporal grid step spans
  (``second_per_grid_t``: the temporal patch size over the frame rate);
* ``("pad", n)``: n padding tokens, only first in a row of a left-padded batch.

Vision tokens are laid out row-major over the merged grid (t slowest, w fastest), as the models' processors write
them. The rule (Qwen2-VL, arXiv 2409.12191, section 2.1, and the published ``get_rope_index``): a text token has one
position on every axis, one more than the token before it; a vision block starting at s gives its token at grid index
(k, i, j) the position (s + time(k), s + i, s + j); every segment starts at one past the largest position used so far
on any axis (0 for the first). How a video's temporal index grows is the model's :data:`TIME_RULES` entry.

A model's prompts frame every vision block: its chat template writes special tokens around each one (Qwen2-VL's
``<|vision_start|>`` and ``<|vision_end|>``, Qwen2.5-Omni's ``<|vision_bos|>`` and ``<|vision_eos|>``, a timestamp
before each of Qwen3-VL's frames), and they are text. The **framing** (before, after) is the least text a real prompt
has right before and right after every block (:func:`framed`); a builder is judged on sequences that honour it, since
one that reads the token after a block as its closing token (Qwen2.5-Omni's) meets no other.

Every function takes plain Python values and numpy arrays, so one definition serves the reference the properties
compare with and the rendered spec.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

#: how a video's temporal grid index k becomes its temporal position (the expectation's ``video_time``)
TIME_RULES: dict[str, str] = {
    "grid": "time(k) = k: one position per temporal grid step (Qwen2-VL)",
    "seconds": "time(k) = floor(k x seconds x tokens_per_second): positions follow the clock (Qwen2.5-VL's "
               "second_per_grid_t x tokens_per_second, truncated)",
    "frames": "each frame is its own block of t = 1 after its timestamp text, time(0) = 0 (Qwen3-VL, GLM-4.1V: time "
              "is carried by the timestamps)",
}

#: the framing of a sequence whose model states none (before, after): one text token before every block, where a
#: processor's vision-start token stands, and none required after
FRAMING: tuple[int, int] = (1, 0)


def tokens(segment: Sequence) -> int:
    """How many tokens a segment is."""
    kind = segment[0]
    if kind in ("text", "pad"):
        return int(segment[1])
    t, h, w = segment[1]
    return int(t) * int(h) * int(w)


def length(segments: Sequence[Sequence]) -> int:
    return sum(tokens(s) for s in segments)


def time_index(k: int, seconds, video_time: str, tokens_per_second=None) -> int:
    """The temporal offset of a video's grid step k under the rule ``video_time``: exact rational arithmetic on the
    seconds as given, truncated (the published code truncates with ``.long()``)."""
    if video_time == "seconds":
        return int(k * Fraction(seconds) * Fraction(tokens_per_second))
    return int(k)


def time_options(k: int, seconds, video_time: str, tokens_per_second=None) -> set[int]:
    """The temporal offsets a correct builder may give grid step k: :func:`time_index`, and, where
    k x seconds x tokens_per_second lies within float32's rounding of a whole number m, both m - 1 and m (the models
    multiply in float32, whose product of three factors is within 3 x 2^-24 of the exact one, so it may land on
    either side of m before it is truncated)."""
    exact = time_index(k, seconds, video_time, tokens_per_second)
    if video_time != "seconds":
        return {exact}
    v = k * Fraction(seconds) * Fraction(tokens_per_second)
    out = {exact}
    if v.denominator != 1 and abs(float(v) - round(float(v))) <= 3 * 2.0 ** -24 * max(1.0, float(v)):
        out |= {round(float(v)), round(float(v)) - 1}
    return out


def block(start: int, grid: Sequence[int], times: Sequence[int]) -> np.ndarray:
    """A vision block's positions (t h w tokens, 3): grid index (k, i, j) row-major at (start + times[k], start + i,
    start + j)."""
    t, h, w = (int(v) for v in grid)
    k, i, j = np.meshgrid(np.asarray(times, dtype=np.int64), np.arange(h), np.arange(w), indexing="ij")
    return np.stack([k.ravel(), i.ravel(), j.ravel()], axis=1).astype(np.int64) + start


def position_ids(segments: Sequence[Sequence], video_time: str, tokens_per_second=None) -> np.ndarray:
    """The positions (n, 3) of a sequence of segments (no padding) under a model's time rule."""
    out, start = [], 0
    for seg in segments:
        kind = seg[0]
        if kind == "text":
            n = int(seg[1])
            p = np.repeat(np.arange(start, start + n, dtype=np.int64)[:, None], 3, axis=1)
        elif kind in ("image", "video"):
            t = int(seg[1][0])
            times = ([time_index(k, seg[2], video_time, tokens_per_second) for k in range(t)]
                     if kind == "video" and video_time != "frames" else [0] * t)
            if kind == "video" and video_time == "frames":
                # one block per frame, each at one past the previous frame's largest position
                frames = []
                for _ in range(t):
                    frames.append(block(start, (1,) + tuple(seg[1][1:]), [0]))
                    start = int(frames[-1].max()) + 1
                out.extend(frames)
                continue
            p = block(start, seg[1], times)
        else:
            raise ValueError(f"a {kind!r} segment has no positions of its own (padding comes first in a batch row)")
        out.append(p)
        if len(p):
            start = int(p.max()) + 1
    return np.concatenate(out, axis=0) if out else np.zeros((0, 3), dtype=np.int64)


def next_position(positions: np.ndarray) -> int:
    """Where decoding continues after the prefill: one past the largest position on any axis (``rope_deltas`` =
    that minus the prompt's length)."""
    return int(np.max(positions)) + 1 if np.size(positions) else 0


def framed(segments: Sequence[Sequence], framing: Sequence[int] = FRAMING) -> list[tuple]:
    """The segments with their text lengthened to the framing (before, after): a run of text before a block is at
    least ``before`` tokens, after a block at least ``after``, between two blocks at least ``after + before``, and every
    run at least one; a block first gets ``before`` text tokens ahead of it, a block last ``after`` behind it. A
    sequence honours the framing exactly when this returns it unchanged."""
    before, after = (int(v) for v in framing)
    segs = [tuple(s) for s in segments]
    if segs and segs[0][0] in ("image", "video") and before:
        segs.insert(0, ("text", before))
    if segs and segs[-1][0] in ("image", "video") and after:
        segs.append(("text", after))
    out = []
    for i, seg in enumerate(segs):
        if seg[0] == "text":
            least = (after if i and segs[i - 1][0] in ("image", "video") else 0) + \
                    (before if i + 1 < len(segs) and segs[i + 1][0] in ("image", "video") else 0)
            seg = ("text", max(int(seg[1]), least, 1))
        elif out and out[-1][0] in ("image", "video") and after + before:
            out.append(("text", after + before))
        out.append(seg)
    return out


def spans(segments: Sequence[Sequence]) -> list[tuple[str, int, int, Sequence]]:
    """Each segment's (kind, first token, end token, segment)."""
    out, at = [], 0
    for seg in segments:
        n = tokens(seg)
        out.append((seg[0], at, at + n, seg))
        at += n
    return out
