"""Attention with the sinusoidal encoding added to q and k instead of RoPE: scores depend on absolute positions."""

from ropespec.implementations.zoo._encodings import attend

TARGETS = ("attention.shift-invariance",)
DIAGNOSIS = "absolute-position"
SOURCE = "seed tutorial 004 (additive cross terms); a model converted to RoPE that kept its additive table"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


def make(expect):
    return attend(expect, additive=True)
