"""NTK-aware scaling with base * s instead of base * s^(r/(r-2))."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.ntk-endpoints", "rope.conformance")
DIAGNOSIS = "scaling"
SOURCE = ("NTK-aware scaling is base * s^(d/(d-2)) (transformers' _compute_dynamic_ntk_parameters); "
          "base' = base * s is the common simplification, wrong by a little")
EXPECT = {"head_dim": 64, "max_position": 16384, "rope_scaling": {"rope_type": "ntk", "factor": 8.0}}


def _table(expect, seq_len):
    s = expect.rope_scaling["factor"]
    return spec_table(expect.replace(rope_scaling=None, rope_theta=expect.rope_theta * s), seq_len)


def make(expect):
    return build(expect, table=_table)
