"""Casts positions to float16 before forming the angle: positions above 2048 are rounded."""

import numpy as np

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import round_to

TARGETS = ("rope.conformance",)
DIAGNOSIS = "angle-precision"
SOURCE = "Megatron-LM #535 (positions cast to fp16: tail positions identical); gpt-neox #1003"
#: checked under this expectation (positions stay below float16's largest finite value, 65504)
EXPECT = {"max_position": 32768}


def make(expect):
    return build(expect, positions_map=lambda p: round_to(np.asarray(p, dtype=np.float64), "float16"))
