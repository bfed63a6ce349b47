"""Normalises the frequency exponent by head_dim instead of the rotary dim (partial rotary)."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "rotary-dim"
SOURCE = "pie PR #603 (exponent normalised by head_dim: right at position 0, drifts with distance)"


def make(expect):
    return build(expect, exponent_dim=expect.head_dim)
