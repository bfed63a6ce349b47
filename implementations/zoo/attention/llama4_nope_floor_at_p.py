"""Llama 4's NoPE layers with Mistral's temperature step: floor(p / 8192) where Llama 4 takes floor((p + 1) / 8192)."""

from ropespec.implementations.attention import make as make_attention
from ropespec.spec import presets

TARGETS = ("attention.query-temperature",)
DIAGNOSIS = "query-temperature"
SOURCE = ("not yet seen in a tracker: Ministral 3's get_llama_4_attn_scale (floor(p / L)) reused for Llama 4's NoPE "
          "layers, whose attn_scales are log1p(floor((positions + 1) / floor_scale)) attn_scale + 1 (transformers' "
          "Llama4TextAttention), under the llama-4-scout-nope preset's 40 query heads over 8")
FAMILY = "attention"
EXPECT = presets.get("llama-4-scout-nope").to_dict()


def make(expect):
    return make_attention(expect.replace(query_temperature_offset=0))
