"""Ignores the partial rotary factor: rotates all head_dim dims."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.partial-passthrough", "rope.conformance")
DIAGNOSIS = "rotary-dim"
SOURCE = "maxtext #4616 (partial rotary factor ignored)"


def make(expect):
    return build(expect, rotary_dim=expect.head_dim)
