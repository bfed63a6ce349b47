"""Position interpolation that multiplies the frequencies by the factor instead of dividing."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.bounded", "scaling.linear-positions", "rope.conformance")
DIAGNOSIS = "scaling"
SOURCE = "position interpolation written as theta * s (positions stretched instead of squeezed)"
EXPECT = {"head_dim": 64, "max_position": 16384, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}


def _table(expect, seq_len):
    theta, g = spec_table(expect.replace(rope_scaling=None), seq_len)
    return theta * (expect.rope_scaling or {}).get("factor", 1.0), g


def make(expect):
    return build(expect, table=_table)
