"""bshd layout, right for the first 8 heads of a call and leaving every head after them unrotated: a kernel whose grid
covers the heads in one block of 8."""

import numpy as np

from ropespec.implementations.numpy_layout import bshd

TARGETS = ("rope.layout",)
DIAGNOSIS = "tile-boundary"
SOURCE = ("a kernel whose grid covers the heads in one block of 8 (a launch that assumes at most 8 heads), rebuilt "
          "as a plain function: the case no call of 3 heads or fewer meets")
LAYOUT = "bshd"
EXPECT = {"head_dim": 32, "dtype": "float32"}
BLOCK = 8


def make(expect):
    inner = bshd(expect)

    def rope(x, positions):
        out = np.array(inner(x, positions))
        out[:, :, BLOCK:] = x[:, :, BLOCK:]
        return out

    return rope
