"""Proportional RoPE with its exponent normalised by the dims that turn (b^(-2i/2k)), not by the whole rotary width."""

from ropespec.implementations.zoo._base import build, mistaken_table

TARGETS = ("rope.conformance",)
DIAGNOSIS = "rotary-dim"
SOURCE = ("not yet seen in a tracker: partial rotary's rule (the exponent over the rotated dims) applied to Gemma 4's "
          "proportional RoPE, whose exponent is over head_dim (transformers' _compute_proportional_rope_parameters)")
EXPECT = {"head_dim": 64, "rope_theta": 1000000.0, "max_position": 131072,
          "rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}


def make(expect):
    return build(expect, table=mistaken_table("rotated dims"))
