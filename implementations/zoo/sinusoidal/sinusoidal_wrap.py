"""Sinusoidal table of 256 rows indexed modulo its length: positions 256 apart collide."""

from ropespec.implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.distinct", "sinusoidal.relative-dot")
DIAGNOSIS = "position-offset"
SOURCE = "precomputed tables indexed modulo their length (nanochat PR #520)"
FAMILY = "sinusoidal"


def make(expect):
    return pe(expect, positions_map=lambda p: p % 256)
