"""Returns a fourth row of text positions beside t, h, w."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.text",)
DIAGNOSIS = "shape"
SOURCE = "transformers #40154 (a fourth text row broke Qwen2.5-VL's position ids)"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, axes=4)
