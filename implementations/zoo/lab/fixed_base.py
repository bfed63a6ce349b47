"""thetas ignores its base argument and always uses 10000."""

from ropespec.implementations.stdlib_lab import additive_score, pairs_within_first_turn, rotate_pair  # noqa: F401
from ropespec.implementations.zoo.lab import build

FAULT = {"thetas": "base", "rope": "base", "rope_score": "base"}


def thetas(d, base=10000.0):
    return [10000.0 ** (-2.0 * i / d) for i in range(d // 2)]


rope, rope_score, turns = build(rotate_pair, thetas)
