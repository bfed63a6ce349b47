"""Position ids start at 1 instead of 0: every position is shifted by one."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.identity-at-zero", "rope.composition", "rope.conformance")
DIAGNOSIS = "position-offset"
SOURCE = "transformers #22161 (positions not derived from the mask); position ids built with arange(1, n + 1)"


def make(expect):
    return build(expect, positions_map=lambda p: p + 1)
