"""thd layout, but cu_seqlens ignored: positions run on across the packed sequences from the first offset."""

import numpy as np

from ropespec.implementations.numpy_layout import _rows

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "flash-attention's apply_rotary_emb with cu_seqlens (varlen); packed-sequence position bugs"
LAYOUT = "thd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    rotate = _rows(expect)

    def apply(x, positions, cu_seqlens):
        return rotate(x, (positions[0] + np.arange(len(x)))[:, None])

    return apply
