"""Returns a Python list of rows instead of an array."""

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "shape"
SOURCE = "a port that forgot to convert its result back to an array"


def make(expect):
    return build(expect, post=lambda x, out, positions: out.tolist())
