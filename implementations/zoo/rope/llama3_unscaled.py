"""Llama 3.1 scaling that returns the unscaled inverse frequencies."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.band-edges", "rope.conformance")
DIAGNOSIS = "scaling"
SOURCE = "transformers PR #32330 (Llama 3.1 returned the unscaled inv_freq)"
EXPECT = {"head_dim": 128, "rope_theta": 500000.0, "max_position": 131072,
          "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 8192}}


def _table(expect, seq_len):
    return spec_table(expect.replace(rope_scaling=None), seq_len)


def make(expect):
    return build(expect, table=_table)
