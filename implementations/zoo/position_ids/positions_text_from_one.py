"""Text starts at position 1, not 0 (an off-by-one start)."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.text",)
DIAGNOSIS = "position-offset"
SOURCE = "vLLM #16878 (Qwen2.5-Omni's positions off by one)"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, start=1)
