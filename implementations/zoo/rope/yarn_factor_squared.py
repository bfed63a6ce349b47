"""YaRN's attention factor applied twice (to cos/sin and again to the output)."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.attention-factor", "rope.conformance")
DIAGNOSIS = "attention-factor"
SOURCE = "sglang PR #33558 and TensorRT-LLM PR #16379 (YaRN attention factor applied twice)"
EXPECT = {"head_dim": 64, "max_position": 16384,
          "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 2048}}


def _table(expect, seq_len):
    theta, g = spec_table(expect, seq_len)
    return theta, g * g


def make(expect):
    return build(expect, table=_table)
