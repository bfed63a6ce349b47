"""Llama 4's query temperature stepping one position early: floor(p / L) where Llama 4 takes floor((p + 1) / L)."""

from ropespec.implementations.attention import make as make_attention

TARGETS = ("attention.query-temperature",)
DIAGNOSIS = "query-temperature"
SOURCE = ("not yet seen in a tracker: Ministral 3's get_llama_4_attn_scale (floor(p / L)) reused for Llama 4's NoPE "
          "layers, whose attn_scales are log1p(floor((cache_position + 1) / floor_scale)) (transformers' llama4)")
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 512, "dtype": "float64", "query_temperature_beta": 0.1,
          "query_temperature_length": 64, "query_temperature_offset": 1}


def make(expect):
    return make_attention(expect.replace(query_temperature_offset=0))
