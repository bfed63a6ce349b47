"""Near the threshold: a NoPE layer's query temperature with beta 1% off (0.101 for 0.1), so that the attention moves by a
few times what its rounding may move it, and no more (no rotation to err: the bound of unturned q and k)."""

from ropespec.implementations.attention import make as make_attention

TARGETS = ("attention.query-temperature",)
DIAGNOSIS = "query-temperature"
SOURCE = ("synthetic: the NoPE temperature bound's tightness (a beta of 0.101 for the 0.1 of transformers' llama4 "
          "attn_scale on its no_rope_layers)")
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 512, "dtype": "float32", "attention_nope": True,
          "query_temperature_beta": 0.1, "query_temperature_length": 64, "query_temperature_offset": 1}
NEAR = True  # its worst error is 2 to 10 times the bound it breaks: a bound 10 times too loose would pass it


def make(expect):
    beta = expect.params("attention").query_temperature_beta
    return make_attention(expect.replace(query_temperature_beta=1.01 * beta))
