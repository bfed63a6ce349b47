"""rotate_pair turns clockwise: the sign of sin is flipped."""

import math

from implementations.stdlib_lab import additive_score, pairs_within_first_turn, thetas, turns  # noqa: F401

FAULT = {"rotate_pair": "direction", "rope": "direction", "rope_score": "direction"}


def rotate_pair(x0, x1, angle):
    c, s = math.cos(angle), math.sin(angle)
    return x0 * c + x1 * s, -x0 * s + x1 * c


def rope(vec, pos, base=10000.0):
    out = list(vec)
    for i, t in enumerate(thetas(len(vec), base)):
        out[2 * i], out[2 * i + 1] = rotate_pair(vec[2 * i], vec[2 * i + 1], pos * t)
    return out


def rope_score(q, k, m, n, base=10000.0):
    return sum(x * y for x, y in zip(rope(q, m, base), rope(k, n, base)))
