"""DINOv3's RoPE with its patch coordinates at the corners, i/H, not the centres, (i + 0.5)/H: every axis reads half a
position early."""

import math

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.conformance", "axes.one-axis")
DIAGNOSIS = "position-offset"
SOURCE = ("not yet seen in a tracker: torch.arange(H) / H for DINOv3's torch.arange(0.5, H) / H (facebookresearch/dinov3 "
          "RopePositionEmbedding; transformers get_patches_center_coordinates), a grid's corners for its centres")
EXPECT = {"head_dim": 16, "rope_theta": 100.0, "axes_dims_rope": [8, 8], "axis_names": ["h", "w"], "max_position": 14,
          "axes_offset": [-6.5, -6.5], "axes_scale": [4 * math.pi / 14, 4 * math.pi / 14], "dtype": "float32"}


def make(expect):
    return build(expect, positions_map=lambda p: p - 0.5)
