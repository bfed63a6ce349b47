"""Learned table that allocates max_len + 1 rows (an off-by-one in the allocation)."""

from ropespec.implementations.zoo._encodings import table

TARGETS = ("learned.parameter-count",)
DIAGNOSIS = "shape"
SOURCE = "padding-index rows allocated on top of max_len"
FAMILY = "learned"
EXPECT = {"head_dim": 16, "max_position": 1024, "dtype": "float64"}


def make(expect):
    return table(expect, rows=expect.max_position + 1)
