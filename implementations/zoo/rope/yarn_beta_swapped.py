"""YaRN with beta_fast and beta_slow swapped: the ramp runs the wrong way."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.band-edges", "rope.conformance")
DIAGNOSIS = "scaling"
SOURCE = "torchtitan PR #3787 (beta_fast and beta_slow swapped in one path)"
EXPECT = {"head_dim": 64, "max_position": 16384,
          "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}}


def _table(expect, seq_len):
    s = dict(expect.to_dict()["rope_scaling"])
    s["beta_fast"], s["beta_slow"] = s.get("beta_slow") or 1, s.get("beta_fast") or 32
    return spec_table(expect.replace(rope_scaling=s), seq_len)


def make(expect):
    return build(expect, table=_table)
