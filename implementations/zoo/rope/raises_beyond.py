"""Raises IndexError for positions beyond a 32768-row cos/sin table."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "exception"
SOURCE = "nanochat PR #520 and pegainfer #220 (positions beyond the table); a bounds check that raises"
LIMIT = 32768


def _check(x, out, positions):
    if np.max(positions) >= LIMIT:
        raise IndexError(f"position {int(np.max(positions))} is beyond the cos/sin table ({LIMIT} rows)")
    return out


def make(expect):
    return build(expect, post=_check)
