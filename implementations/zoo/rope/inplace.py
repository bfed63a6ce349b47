"""Writes the result into the caller's x and returns it."""

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.input-unmodified",)
DIAGNOSIS = "input-mutated"
SOURCE = "in-place kernels exposed as out-of-place functions (flash-attention tests check this)"


def _write_back(x, out, positions):
    x[...] = out
    return x


def make(expect):
    return build(expect, post=_write_back)
