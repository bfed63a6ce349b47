"""Sinusoidal encoding multiplied by sqrt(d) (an embedding-scale factor applied to the wrong term)."""

import numpy as np

from ropespec.implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.norm", "sinusoidal.conformance")
DIAGNOSIS = "scale"
SOURCE = "x * sqrt(d) + PE written as (x + PE) * sqrt(d)"
FAMILY = "sinusoidal"


def make(expect):
    return pe(expect, post=lambda out, p: out * np.sqrt(out.shape[1]))
