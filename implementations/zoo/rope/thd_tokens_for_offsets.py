"""Packed rows given one offset per sequence, read as one position per token (tokens past the offsets at 0)."""

import numpy as np

from ropespec.implementations.numpy_layout import thd_per_token

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "FlashInfer's apply_rope_pos_ids (one position per token) handed flash-attention's per-sequence offsets"
LAYOUT = "thd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    inner = thd_per_token(expect)

    def apply(x, positions, cu_seqlens):
        per_token = np.zeros(len(x), dtype=np.int64)
        per_token[: len(positions)] = positions[: len(x)]
        return inner(x, per_token, cu_seqlens)

    return apply
