"""A 3-D RoPE whose h and w position columns are read in each other's place (row and column ids swapped)."""

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.conformance", "axes.separation", "axes.one-axis", "axes.equal-axes-differ")
DIAGNOSIS = "axes-swapped"
SOURCE = "Llama 4 vision's [x | y] (x the patch column) read as [h | w]; FLUX's img_ids row and column"
EXPECT = {"head_dim": 24, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [4, 8, 12],
          "dtype": "float32"}


def make(expect):
    return build(expect, positions_map=lambda p: p[:, [0, 2, 1]])
