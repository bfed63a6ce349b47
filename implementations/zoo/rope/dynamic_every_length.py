"""Dynamic NTK that scales at every length: the table for max_position is used from the first token."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.dynamic-length", "rope.conformance")
DIAGNOSIS = "scaling"
SOURCE = "vLLM #3488 and #41236 (dynamic NTK base wrong / scaled at all lengths)"
EXPECT = {"head_dim": 64, "max_position": 16384,
          "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}}


def _table(expect, seq_len):
    return spec_table(expect, expect.max_position)


def make(expect):
    return build(expect, table=_table)
