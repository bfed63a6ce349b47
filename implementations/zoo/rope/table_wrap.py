"""Reads cos/sin from a 4096-row table indexed modulo its length: positions wrap around."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.relative-position", "rope.conformance")
DIAGNOSIS = "position-offset"
SOURCE = "nanochat PR #520 and pegainfer #220 (positions beyond the table read the wrong rows)"
TABLE = 4096


def make(expect):
    return build(expect, positions_map=lambda p: p % TABLE)
