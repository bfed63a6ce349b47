"""Sinusoidal encoding of positions rescaled to the batch: p * 1000 / max(p) (the length leaks in)."""

import numpy as np

from ropespec.implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.length-independent",)
DIAGNOSIS = "length-leak"
SOURCE = "seed tutorial 000: the length-normalised index (slot 3 is 0.43 in 8 tokens, 0.05 in 64)"
FAMILY = "sinusoidal"


def make(expect):
    return pe(expect, positions_map=lambda p: np.round(p * 1000.0 / max(1, int(np.max(p)))).astype(np.int64))
