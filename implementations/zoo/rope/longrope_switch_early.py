"""LongRoPE that switches to the long factors at sequence length L instead of beyond it."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.longrope-switch",)
DIAGNOSIS = "scaling"
SOURCE = "transformers PR #33129 (Phi-3 LongRoPE switches factors mid-generation); off-by-one on the switch"
EXPECT = {"head_dim": 16, "max_position": 16384,
          "rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 4.0,
                           "short_factor": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
                           "long_factor": [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.0]}}


def _table(expect, seq_len):
    return spec_table(expect, seq_len + 1)  # seq_len >= L already counts as long


def make(expect):
    return build(expect, table=_table)
