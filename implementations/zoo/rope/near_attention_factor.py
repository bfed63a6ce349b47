"""Near the threshold: scales every rotated pair by 1 + 40 u of the output dtype (an attention factor
rounded through a lower precision), a few times the norm bound and no more."""

import numpy as np

from ropespec.implementations.zoo._base import build, spec_table
from ropespec.spec.dtypes import unit_roundoff

TARGETS = ("rope.norm-per-pair",)
DIAGNOSIS = "attention-factor"
SOURCE = "yarn's mscale formed in half precision; the norm bound's tightness"
EXPECT = {"head_dim": 64, "dtype": "float32", "max_position": 4096}
NEAR = True  # its worst error is 2 to 10 times the bound it breaks


def make(expect):
    k = 1.0 + 40 * unit_roundoff(expect.dtype)

    def table(e, seq_len):
        th, g = spec_table(e, seq_len)
        return th, g * k

    return build(expect, table=table)
