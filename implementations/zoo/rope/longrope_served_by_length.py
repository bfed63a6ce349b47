"""LongRoPE served under vLLM's policy (max_model_len beyond the original length: the long factors at every length),
computed by transformers' policy instead: the short factors while the sequence is within the original length."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.longrope-switch",)
DIAGNOSIS = "scaling"
SOURCE = ("vLLM's Phi3LongRoPEScaledRotaryEmbedding (use_long_rope = max_model_len > original_max_position_embeddings, "
          "so that a sequence crossing L keeps its cached keys) ported with transformers' switch by length")
EXPECT = {"head_dim": 16, "max_position": 16384,
          "rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 4.0,
                           "max_model_len": 16384,
                           "short_factor": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
                           "long_factor": [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.0]}}


def _table(expect, seq_len):
    if not expect.rope_scaling or "max_model_len" not in expect.rope_scaling:
        return spec_table(expect, seq_len)
    by_length = {k: v for k, v in expect.rope_scaling.items() if k != "max_model_len"}
    return spec_table(expect.replace(rope_scaling=by_length), seq_len)


def make(expect):
    return build(expect, table=_table)
