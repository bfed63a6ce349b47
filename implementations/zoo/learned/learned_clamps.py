"""Learned table that clamps positions beyond max_len to the last row."""

import numpy as np

from ropespec.implementations.zoo._encodings import table

TARGETS = ("learned.out-of-range-raises",)
DIAGNOSIS = "position-offset"
SOURCE = "index clamping in embedding lookups (silent: the tutorial's position 1088 should raise)"
FAMILY = "learned"
EXPECT = {"head_dim": 16, "max_position": 1024, "dtype": "float64"}


def make(expect):
    return table(expect, index=lambda p, n: np.minimum(p, n - 1))
