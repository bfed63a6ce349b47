"""Returns float64 when float32 was promised (an upcast left in the output path: twice the memory, and a
dtype the next kernel does not take). Caught by contract.shape-finite's own dtype check; a less precise
dtype is refused earlier, where the result crosses back (implementations/arrays.py)."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "shape"
SOURCE = "an .astype(np.float64) left after a float64 accumulation (a reviewer's 'for accuracy')"
EXPECT = {"head_dim": 64, "dtype": "float32"}


def make(expect):
    return build(expect, post=lambda x, out, positions: out.astype(np.float64))
