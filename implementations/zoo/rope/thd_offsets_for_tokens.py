"""Packed rows given one position per token, read as one offset per sequence (the first n_seq positions)."""

import numpy as np

from ropespec.implementations.numpy_layout import thd

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "flash-attention's varlen rotary (one offset per sequence) called with packed position_ids (one per token)"
LAYOUT = "thd"
POSITIONS = "per-token"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    inner = thd(expect)
    return lambda x, positions, cu_seqlens: inner(x, np.asarray(positions)[: len(cu_seqlens) - 1], cu_seqlens)
