"""Rotates the right (interleaved) pairs but writes each result to (i, i + r/2), the half layout, where
the results belong in place: transformers' DeepSeek-V3 ``rope_interleave`` code checked as in-place
interleaved RoPE (DeepSeek's own inference code writes in place)."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.identity-at-zero", "rope.conformance")
DIAGNOSIS = "layout"
SOURCE = ("transformers DeepseekV3 apply_rotary_pos_emb_interleave (interleaved in, half out) against "
          "deepseek-ai/DeepSeek-V3 inference/model.py apply_rotary_emb (complex multiply, in place)")
EXPECT = {"head_dim": 64, "convention": "interleaved", "max_position": 8192}


def make(expect):
    return build(expect, convention="rope_interleave" if expect.convention == "interleaved" else "interleaved")
