"""Qwen3-VL's interleaved M-RoPE computed in chunks: pairs [0, s_t) on t, the next s_h on h, the rest on w."""

from ropespec.implementations.zoo._axes import build, chunked

TARGETS = ("rope.conformance", "axes.separation")
DIAGNOSIS = "axes-chunked"
SOURCE = "MNN #4133 and mlx-vlm #576 (Qwen3-VL's interleaved frequency assignment computed as Qwen2-VL's chunks)"
EXPECT = {"head_dim": 32, "rope_theta": 5000000.0, "mrope_section": [6, 5, 5], "mrope_interleaved": True,
          "dtype": "float32"}


def make(expect):
    return build(expect, pair_axes=chunked)
