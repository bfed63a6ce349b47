"""Attention that rotates by the row index instead of the positions it is given."""

import numpy as np

from ropespec.implementations.zoo._encodings import attend

TARGETS = ("attention.permutation-equivariance",)
DIAGNOSIS = "position-offset"
SOURCE = "transformers #22161 (left padding: positions not derived from the mask); rotary-embedding-torch #11 (offset ignored)"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


def make(expect):
    return attend(expect, positions_map=lambda p: np.arange(len(p)))
