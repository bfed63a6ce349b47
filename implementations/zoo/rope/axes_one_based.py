"""A 2-D RoPE that counts the y axis from 1: every y position is read one too far (a 1-based patch grid)."""

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.identity-at-zero", "rope.conformance")
DIAGNOSIS = "axis-offset"
SOURCE = "Llama 4 vision's rotary counts patches from 1 (transformers Llama4VisionRotaryEmbedding: frequencies_x + 1)"
EXPECT = {"head_dim": 16, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [8, 8],
          "axis_names": ["x", "y"], "dtype": "float32"}


def make(expect):
    return build(expect, positions_map=lambda p: p + [0, 1])
