"""YaRN without its attention factor (cos/sin left unscaled)."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.attention-factor", "rope.conformance")
DIAGNOSIS = "attention-factor"
SOURCE = "exllamav3 #259 (YaRN factor collapses to 1 when mscale = mscale_all_dim = 1)"
EXPECT = {"head_dim": 64, "max_position": 16384,
          "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 2048}}


def _table(expect, seq_len):
    theta, _ = spec_table(expect, seq_len)
    return theta, 1.0


def make(expect):
    return build(expect, table=_table)
