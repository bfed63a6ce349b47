"""Casts positions to bfloat16 before forming the angle: positions above 256 are rounded."""

import numpy as np

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import round_to

TARGETS = ("rope.relative-position", "rope.conformance")
DIAGNOSIS = "angle-precision"
SOURCE = "candle PR #3520 (bf16 positions: 15962 -> 15968); Megatron-LM #535 (positions cast to fp16)"
EXPECT = {}


def make(expect):
    return build(expect, positions_map=lambda p: round_to(np.asarray(p, dtype=np.float64), "bfloat16"))
