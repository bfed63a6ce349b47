"""Attention whose queries carry no temperature where the expectation has one (Ministral 3's llama_4_scaling_beta
dropped, as ropespec's own config reader once dropped it)."""

from ropespec.implementations.attention import make as make_attention

TARGETS = ("attention.query-temperature", "attention.grouped-query")
DIAGNOSIS = "query-temperature"
SOURCE = ("a port of Ministral 3 that applies RoPE and forgets get_llama_4_attn_scale (transformers' ministral3 "
          "multiplies the queries by it after RoPE)")
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 512, "dtype": "float64", "query_temperature_beta": 0.1,
          "query_temperature_length": 64}


def make(expect):
    return make_attention(expect.replace(query_temperature_beta=0.0))
