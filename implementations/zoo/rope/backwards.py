"""Rotates every pair the other way (angle -p*theta_i)."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "direction"
SOURCE = "sign error in rotate_half: [x2, -x1] instead of [-x2, x1]"


def make(expect):
    return build(expect, angle_scale=-1.0)
