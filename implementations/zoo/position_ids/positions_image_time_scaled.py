"""Adds a block's start before the clock multiplies, and clocks still images too."""

from ropespec.implementations.zoo._positions import builder
from ropespec.spec import presets

TARGETS = ("position-ids.time",)
DIAGNOSIS = "image-time-scaled"
SOURCE = ("transformers #45325 (still images scaled by tokens_per_second); the 'must be after time_interval multiply' "
          "rule of get_vision_position_ids")
FAMILY = "position-ids"
EXPECT = presets.get("qwen2.5-vl-7b").to_dict()


def make(expect):
    return builder(expect, start_in_time=True)
