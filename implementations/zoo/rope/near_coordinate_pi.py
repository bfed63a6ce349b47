"""Near the threshold: DINOv3's RoPE with 2 pi formed from a hand-typed pi, 3.1416, so that every coordinate is 2.3e-6
too large in relative terms: a few times what forming it in float32 may cost (COORDINATE_ROUNDINGS roundings), no more."""

import math

import numpy as np

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "scaling"
SOURCE = ("not yet seen in a tracker: a port writing 2 * 3.1416 for DINOv3's 2 * math.pi (facebookresearch/dinov3 "
          "RopePositionEmbedding's angles 2 pi coords / periods): the coordinate bound's tightness")
EXPECT = {"head_dim": 16, "rope_theta": 100.0, "axes_dims_rope": [8, 8], "axis_names": ["h", "w"], "max_position": 14,
          "axes_offset": [-6.5, -6.5], "axes_scale": [4 * math.pi / 14, 4 * math.pi / 14], "dtype": "float32"}
NEAR = True  # its worst error is 2 to 10 times the bound it breaks: a bound 10 times too loose would pass it
_PI = 3.1416


def make(expect):
    offset = np.asarray(expect.axes_offset or (0.0,) * expect.n_axes)
    return build(expect, positions_map=lambda p: (p + offset) * (_PI / math.pi) - offset)
