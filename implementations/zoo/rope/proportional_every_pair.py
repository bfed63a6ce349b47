"""Proportional RoPE that turns every pair: partial_rotary_factor ignored, the pairs of frequency 0 rotated."""

from ropespec.implementations.zoo._base import build, mistaken_table

TARGETS = ("rope.partial-passthrough", "rope.conformance")
DIAGNOSIS = "rotary-dim"
SOURCE = ("not yet seen in a tracker: transformers warns that proportional RoPE without partial_rotary_factor turns "
          "every pair (_validate_proportional_rope_parameters); a port that drops the key computes this")
EXPECT = {"head_dim": 64, "rope_theta": 1000000.0, "max_position": 131072,
          "rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}


def make(expect):
    return build(expect, table=mistaken_table("every pair"))
