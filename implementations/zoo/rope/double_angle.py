"""Rotates by twice the angle (RoPE applied twice to the same tensor)."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "double-rotation"
SOURCE = "rotary applied both in the attention module and in the model's forward"


def make(expect):
    return build(expect, angle_scale=2.0)
