"""rotate_pair turns clockwise: the sign of sin is flipped."""

import math

from ropespec.implementations.stdlib_lab import additive_score, pairs_within_first_turn, thetas, turns  # noqa: F401
from ropespec.implementations.zoo.lab import build

FAULT = {"rotate_pair": "direction", "rope": "direction", "rope_score": "direction"}


def rotate_pair(x0, x1, angle):
    c, s = math.cos(angle), math.sin(angle)
    return x0 * c + x1 * s, -x0 * s + x1 * c


rope, rope_score, _ = build(rotate_pair, thetas)
