"""Attention that rotates V as well as Q and K."""

from implementations.zoo._encodings import attend

TARGETS = ("attention.values-unrotated",)
DIAGNOSIS = "unknown"
SOURCE = "REFERENCE.md section 2 (V is never rotated); rotary applied to the fused qkv tensor"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


def make(expect):
    return attend(expect, rotate_v=True)
