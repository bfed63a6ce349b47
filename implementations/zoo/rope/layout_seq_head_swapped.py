"""Declared bshd, computed as bhsd: the seq and head axes swapped (positions read along the head axis)."""

from ropespec.implementations.numpy_layout import bhsd

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "a kernel written for (batch, heads, seq, dim) handed (batch, seq, heads, dim)"
LAYOUT = "bshd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    return bhsd(expect)
