"""Reads its cos/sin table of max_position rows one row late: every position shifted by one, and the last position's
row past the table's end raises."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.norm-per-pair", "rope.identity-at-zero", "rope.conformance")
DIAGNOSIS = "position-offset"
SOURCE = ("transformers #22161 (position ids one too many) in code that gathers a table of max_position rows: the "
          "shift raises at the last position")
EXPECT = {"head_dim": 16, "max_position": 4096}


def make(expect):
    def one_past(p):
        p = np.asarray(p) + 1
        if np.any(p >= expect.max_position):  # a gather from a table of max_position rows
            raise IndexError(f"index {int(p.max())} is out of bounds for axis 0 with size {expect.max_position}")
        return p

    return build(expect, positions_map=one_past)
