"""Llama 4's NoPE layer ported with its model's RoPE on q and k (the layer's use_rope read the other way round)."""

from ropespec.implementations.attention import make as make_attention
from ropespec.spec import presets

TARGETS = ("attention.query-temperature", "attention.causal")
DIAGNOSIS = "nope"
SOURCE = ("not yet seen in a tracker: transformers' Llama4TextAttention turns q and k only where "
          "config.no_rope_layers[layer_idx] is 1 (use_rope), the temperature only where it is 0; a port reading the "
          "list as the NoPE layers' turns every NoPE layer")
FAMILY = "attention"
EXPECT = presets.get("llama-4-scout-nope").to_dict()


def make(expect):
    return make_attention(expect.replace(attention_nope=False))
