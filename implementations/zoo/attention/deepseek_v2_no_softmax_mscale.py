"""DeepSeek-V2's attention without its softmax's mscale^2: the scores carry no attention factor at all."""

from ropespec.implementations.attention import make as make_attention

TARGETS = ("attention.causal", "attention.grouped-query")
DIAGNOSIS = "attention-factor"
SOURCE = ("transformers #47435 (DeepseekV2Attention's softmax scale without mscale(s, mscale_all_dim)^2); checked "
          "under DeepSeek-V2's YaRN with the factor restated as the cos/sin attention_factor g(40, 0.707) = 1.2608")
FAMILY = "attention"
EXPECT = {"head_dim": 64, "rope_theta": 10000.0, "max_position": 163840, "n_heads": 4, "n_kv_heads": 2,
          "rope_scaling": {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                           "beta_fast": 32, "beta_slow": 1, "attention_factor": 1.2608}}


def make(expect):
    s = dict(expect.rope_scaling, attention_factor=1.0)
    return make_attention(expect.replace(rope_scaling=s))
