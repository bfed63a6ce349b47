"""Dynamic NTK served under SGLang's policy (max_model_len: the base of the served length at every length), computed
by transformers' policy instead: the default table while the sequence is within the original length, a base grown
with the call's length beyond it."""

from ropespec.implementations.zoo._base import build, mistaken_table, spec_table

TARGETS = ("scaling.dynamic-length",)
DIAGNOSIS = "scaling"
SOURCE = ("SGLang's DynamicNTKScalingRotaryEmbedding (one cache, the base of max_position_embeddings x factor, at every "
          "length) ported with transformers' dynamic_rope_update, which grows the base with each call's length")
EXPECT = {"head_dim": 16, "max_position": 16384,
          "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 4096,
                           "max_model_len": 16384}}


def _table(expect, seq_len):
    if not expect.rope_scaling or "max_model_len" not in expect.rope_scaling:
        return spec_table(expect, seq_len)
    return mistaken_table("grown by length")(expect, seq_len)


def make(expect):
    return build(expect, table=_table)
