"""Returns NaN for positions at or beyond 65536 (a cos/sin table that is too short)."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite", "rope.conformance")
DIAGNOSIS = "non-finite"
SOURCE = "nanochat PR #520, pegainfer #220 (positions beyond the table read garbage)"
LIMIT = 65536


def _nan(x, out, positions):
    out = out.copy()
    out[positions >= LIMIT] = np.nan
    return out


def make(expect):
    return build(expect, post=_nan)
