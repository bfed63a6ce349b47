"""YaRN that never truncates the correction range (floor/ceil skipped) where the config asks for it."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("rope.conformance",)
DIAGNOSIS = "scaling"
SOURCE = "keras-hub PR #2981 (YaRN truncate default and clamp differ: 0.268 max diff at s 8)"
EXPECT = {"head_dim": 64, "max_position": 16384,
          "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}}


def _table(expect, seq_len):
    return spec_table(expect.replace(rope_scaling=dict(expect.to_dict()["rope_scaling"], truncate=False)), seq_len)


def make(expect):
    return build(expect, table=_table)
