"""Attention that rotates V as well as Q and K."""

from ropespec.implementations.zoo._encodings import attend

TARGETS = ("attention.values-unrotated",)
DIAGNOSIS = "values-rotated"
SOURCE = ("RoFormer (arXiv 2104.09864) eq. 16: V is never rotated; rotary applied to a fused qkv tensor "
          "instead of its q and k slices")
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


def make(expect):
    return attend(expect, rotate_v=True)
