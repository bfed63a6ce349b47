"""Learned table whose last 10 rows were never initialised (NaN)."""

import numpy as np

from ropespec.implementations.zoo._encodings import table

TARGETS = ("learned.in-range",)
DIAGNOSIS = "non-finite"
SOURCE = "uninitialised rows of a resized table (fla PR #967: uninitialised output)"
FAMILY = "learned"
EXPECT = {"head_dim": 16, "max_position": 1024, "dtype": "float64"}


def _nan(out, p):
    out = out.copy()
    out[p >= 1014] = np.nan
    return out


def make(expect):
    return table(expect, post=_nan)
