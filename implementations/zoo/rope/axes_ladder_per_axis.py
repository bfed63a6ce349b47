"""M-RoPE whose sections each restart their own ladder theta^(-2k/d_a), where Qwen2-VL shares one theta^(-2j/r)."""

from ropespec.implementations.zoo._axes import build, per_axis_ladder

TARGETS = ("rope.conformance", "axes.text-reduction")
DIAGNOSIS = "ladder-per-axis"
SOURCE = ("diffusers' per-axis get_1d_rotary_pos_embed (FLUX) reused for Qwen2-VL's text M-RoPE, whose sections share "
          "one ladder (transformers Qwen2VLRotaryEmbedding)")
EXPECT = {"head_dim": 24, "rope_theta": 1000000.0, "mrope_section": [2, 4, 6], "dtype": "float32"}


def make(expect):
    return build(expect, ladder=per_axis_ladder)
