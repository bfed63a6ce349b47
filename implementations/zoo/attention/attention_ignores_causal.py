"""Attention that never applies the causal mask."""

from ropespec.implementations.zoo._encodings import attend

TARGETS = ("attention.causal",)
DIAGNOSIS = "causal-mask"
SOURCE = "is_causal dropped on a code path (a mask passed as None)"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


def make(expect):
    return attend(expect, causal=False)
