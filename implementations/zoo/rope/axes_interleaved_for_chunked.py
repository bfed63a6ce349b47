"""Qwen2-VL's chunked M-RoPE computed interleaved, pair j on axis j mod 3 (Qwen3-VL's assignment)."""

from ropespec.implementations.zoo._axes import build, interleaved

TARGETS = ("rope.conformance", "axes.separation")
DIAGNOSIS = "axes-interleaved"
SOURCE = "vllm-gaudi #1437 and xllm #2120 (interleaved frequency assignment mixed up with chunked sections)"
EXPECT = {"head_dim": 24, "rope_theta": 1000000.0, "mrope_section": [2, 4, 6], "dtype": "float32"}


def make(expect):
    return build(expect, pair_axes=interleaved)
