"""bhsd layout, with cos/sin unsqueezed at the seq axis instead of the head axis (broadcast along the wrong axis)."""

import numpy as np

from ropespec.implementations.numpy_layout import _rows

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "transformers' apply_rotary_pos_emb(unsqueeze_dim=...): 1 for (b, h, s, d), 2 for (b, s, h, d)"
LAYOUT = "bhsd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    rotate = _rows(expect)
    return lambda x, positions: rotate(x, np.asarray(positions)[:, :, None])  # right: [:, None, :]
