"""Caches the cos/sin tables in bfloat16 while the output is float32."""

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import round_to

TARGETS = ("rope.conformance",)
DIAGNOSIS = "angle-precision"
SOURCE = "modded-nanogpt #39 (bf16 cos/sin cache); transformers #29496 (cache regrown from bf16)"
EXPECT = {}


def _rotate(xa, xb, c, s):
    c, s = round_to(c, "bfloat16"), round_to(s, "bfloat16")
    return xa * c - xb * s, xa * s + xb * c


def make(expect):
    return build(expect, rotate=_rotate)
