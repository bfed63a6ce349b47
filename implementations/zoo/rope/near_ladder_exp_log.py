"""Near the threshold: the ladder formed as exp(-(2i/r) ln b) in float32 (mlx's fast.rope forms 2^(-(2i/r) log2 b)),
with ln b forty float32 roundings off: a few times what the float32 class allows the ladder of any formation."""

import math

import numpy as np

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import unit_roundoff

TARGETS = ("rope.conformance",)
DIAGNOSIS = "base"
SOURCE = ("synthetic, on mlx's fast.rope (the ladder as an exponential of the base's log): the float32 class's "
          "ladder bound is tight for a log of the base off by a few tens of roundings")
EXPECT = {"head_dim": 64, "dtype": "float32", "max_position": 4096}
NEAR = True  # its worst error is 2 to 10 times the bound it breaks: a bound 10 times too loose would pass it
#: how many float32 unit roundoffs ln b is off by
ROUNDINGS = 40


def _ladder(expect, seq_len):
    f32 = np.float32
    log_b = f32(math.log(expect.rope_theta) * (1 + ROUNDINGS * unit_roundoff("float32")))
    expo = (np.arange(0, expect.rotary_dim, 2) / expect.rotary_dim).astype(f32)
    return np.exp(-(expo * log_b).astype(f32)).astype(f32).astype(np.float64), 1.0


def make(expect):
    return build(expect, table=_ladder)
