"""bshd layout, but every batch row is rotated by batch row 0's positions (left padding lost)."""

import numpy as np

from ropespec.implementations.numpy_layout import bshd

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "transformers #22161 (position ids not derived from the padding mask)"
LAYOUT = "bshd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    inner = bshd(expect)
    return lambda x, positions: inner(x, np.broadcast_to(positions[:1], positions.shape))
