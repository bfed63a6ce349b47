"""One numpy position-id builder, batched as transformers' get_rope_index is, that zoo members bend in exactly one
place each. With no keywords it follows :mod:`ropespec.spec.positions`' rule for the expectation's ``video_time``."""

from __future__ import annotations

import numpy as np


def builder(expect, *, start=0, axes=3, grid_swapped=False, text_after_first_image=False, seconds=float,
            start_in_time=False, resume="max", pads_counted=False, row0=False, next_at_length=False):
    """A batched builder ``position_ids(rows) -> (positions (b, n, axes), next (b, axes))`` for ``expect``.

    start: the first position. axes: how many rows of positions it returns (a fourth text row: 4). grid_swapped: the
    h and w positions trade places. text_after_first_image: every vision block after the first gets text positions.
    seconds: how the seconds per temporal step are read (int: truncated). start_in_time: the block's start is added
    before the clock multiplies, still images clocked too. resume: where the next segment starts ("max": one past the
    largest position, "count": the token count, "spatial": the block's start plus max(h, w)). pads_counted: the
    left pads get positions (no attention mask). row0: every row gets row 0's positions. next_at_length: decoding
    continues at the prompt's length.
    """
    rule, tps = expect.params("position-ids").video_time, expect.params("position-ids").tokens_per_second

    def one(segments):
        out, cur, blocks, real = [], start, 0, 0
        for seg in segments:
            kind = seg[0]
            if kind == "pad":
                n = seg[1]
                out.append(np.repeat(np.arange(cur, cur + n)[:, None], 3, 1) if pads_counted else np.zeros((n, 3), int))
                cur += n if pads_counted else 0
                continue
            if kind == "text" or (text_after_first_image and blocks >= 1):
                n = seg[1] if kind == "text" else int(np.prod(seg[1]))
                p = np.repeat(np.arange(cur, cur + n)[:, None], 3, 1)
                blocks += kind != "text"
            else:
                blocks += 1
                t, h, w = seg[1]
                interval = tps * seconds(seg[2]) if kind == "video" and rule == "seconds" else 1
                if start_in_time and rule == "seconds":
                    interval = tps * seconds(seg[2]) if kind == "video" else tps
                    tt = ((cur + np.arange(t)) * interval).astype(np.int64)
                else:
                    tt = (np.arange(t) * interval).astype(np.int64) + cur
                k, i, j = np.meshgrid(tt, np.arange(h) + cur, np.arange(w) + cur, indexing="ij")
                cols = [k, j, i] if grid_swapped else [k, i, j]
                p = np.stack([c.ravel() for c in cols], 1)
            real += len(p)
            out.append(p)
            cur = (int(p.max()) + 1 if resume == "max" else start + real if resume == "count" else
                   int(p[:, 1].min()) + max(seg[1][1], seg[1][2]) if kind != "text" else int(p.max()) + 1)
        pos = np.concatenate(out).astype(np.int64)
        n_real = real
        if axes == 4:
            pos = np.concatenate([pos[:, :1], pos], 1)
        return pos, n_real

    def position_ids(rows):
        built = [one(r) for r in rows]
        pos = np.stack([b[0] for b in built])
        if row0:
            pos = np.broadcast_to(pos[:1], pos.shape).copy()
        n = pos.shape[1]
        nxt = [b[1] if next_at_length else int(pos[r, n - b[1]:].max()) + 1 for r, b in enumerate(built)]
        return pos, np.repeat(np.array(nxt, dtype=np.int64)[:, None], pos.shape[2], 1)

    position_ids.batched = True
    return position_ids
