"""Forgets rotate_half: computes x*cos + x*sin, which scales each component instead of rotating."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.norm-per-pair", "rope.composition", "rope.conformance")
DIAGNOSIS = "not-a-rotation"
SOURCE = "q * cos + q * sin written for q * cos + rotate_half(q) * sin"


def make(expect):
    return build(expect, rotate=lambda xa, xb, c, s: (xa * c + xa * s, xb * c + xb * s))
