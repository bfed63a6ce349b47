"""Gives every batch row the positions of row 0."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.batch",)
DIAGNOSIS = "layout"
SOURCE = "Liger-Kernel #461 / PR #464 (only batch row 0's positions read under left padding)"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, row0=True)
