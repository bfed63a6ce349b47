"""Qwen3.5's interleaved M-RoPE ported with Qwen2-VL's chunked sections: pairs [0, 11) on t, [11, 22) on h, the rest on w."""

from ropespec.implementations.zoo._axes import build, chunked
from ropespec.spec import presets

TARGETS = ("rope.conformance",)
DIAGNOSIS = "axes-chunked"
SOURCE = ("not yet seen in a tracker: Qwen2.5-VL's apply_multimodal_rotary_pos_emb (sections as chunks) reused for "
          "Qwen3.5's text rotary, whose apply_interleaved_mrope deals the sections one pair of each axis at a time")
EXPECT = presets.get("qwen3.5").to_dict()


def make(expect):
    return build(expect, pair_axes=chunked)
