"""Sinusoidal encoding plus a constant 0.1: an affine map, no longer PE(p + k) = M_k PE(p)."""

from ropespec.implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.shift-matrix", "sinusoidal.norm", "additive.cross-term-leakage")
DIAGNOSIS = "bias"
SOURCE = "a bias left in a position-embedding layer"
FAMILY = "sinusoidal"


def make(expect):
    return pe(expect, post=lambda out, p: out + 0.1)
