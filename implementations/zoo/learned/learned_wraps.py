"""Learned table that wraps positions beyond max_len around (p mod max_len)."""

from ropespec.implementations.zoo._encodings import table

TARGETS = ("learned.out-of-range-raises",)
DIAGNOSIS = "position-offset"
SOURCE = "nanochat PR #520 and pegainfer #220 (positions beyond the table)"
FAMILY = "learned"
EXPECT = {"head_dim": 16, "max_position": 1024, "dtype": "float64"}


def make(expect):
    return table(expect, index=lambda p, n: p % n)
