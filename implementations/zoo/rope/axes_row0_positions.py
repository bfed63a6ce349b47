"""A batched M-RoPE that rotates every batch row by batch row 0's position vectors (left padding lost)."""

import numpy as np

from ropespec.implementations.numpy_layout import bshd

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "Liger-Kernel #461 / PR #464 (Qwen2-VL's M-RoPE kernel read only batch row 0's positions)"
LAYOUT = "bshd"
EXPECT = {"head_dim": 24, "rope_theta": 1000000.0, "mrope_section": [2, 4, 6], "dtype": "float32"}


def make(expect):
    inner = bshd(expect)
    return lambda x, positions: inner(x, np.broadcast_to(positions[:1], positions.shape))
