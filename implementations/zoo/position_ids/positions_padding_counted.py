"""Gives the left pads positions, so that padding moves the real tokens."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.batch",)
DIAGNOSIS = "padding-shift"
SOURCE = "transformers #22161 (positions not derived from the attention mask); LightX2V #1416"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, pads_counted=True)
