"""A vision block's height and width positions trade places."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.grid",)
DIAGNOSIS = "axes-swapped"
SOURCE = "MNN #4133 and FLUX's row/column ids (h and w read in each other's place)"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, grid_swapped=True)
