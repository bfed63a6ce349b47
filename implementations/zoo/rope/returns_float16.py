"""Returns float16 when float32 was promised (a half-precision cast left in place)."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "shape"
SOURCE = "a half-precision cast left in the output path"
EXPECT = {"head_dim": 64, "dtype": "float32"}


def make(expect):
    return build(expect, post=lambda x, out, positions: out.astype(np.float16))
