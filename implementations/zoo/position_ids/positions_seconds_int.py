"""Truncates the seconds per temporal step to an integer before the clock multiplies."""

from ropespec.implementations.zoo._positions import builder
from ropespec.spec import presets

TARGETS = ("position-ids.time",)
DIAGNOSIS = "time-collapsed"
SOURCE = "transformers PR #48669; lmms-eval #1393 (second_per_grid_t cast to int: above 2 fps every frame at t = 0)"
FAMILY = "position-ids"
EXPECT = presets.get("qwen2.5-vl-7b").to_dict()


def make(expect):
    return builder(expect, seconds=int)
