"""Right for the first 128 rows of a call and leaves the rows after them unrotated: a kernel that tiles its rows in
blocks of 128 and masks every block past the first as if it were the last."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance:long_calls",)
DIAGNOSIS = "tile-boundary"
SOURCE = ("a kernel whose row tiles past the first are masked as its last one (a wrong tail mask), rebuilt as a plain "
          "function: the case no call of 64 rows or fewer meets")
TILE = 128


def _tail(x, out, positions):
    out = out.copy()
    out[TILE:] = x[TILE:]
    return out


def make(expect):
    return build(expect, post=_tail)
