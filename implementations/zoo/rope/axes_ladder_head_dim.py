"""A FLUX-style 3-D RoPE whose every axis restarts its ladder but normalises it by head_dim, theta^(-2k/D), where each
axis's own ladder is theta^(-2k/d_a)."""

from ropespec.implementations.zoo._axes import build, per_axis_ladder

TARGETS = ("rope.conformance", "axes.one-axis")
DIAGNOSIS = "rotary-dim"
SOURCE = ("not yet seen in a tracker: diffusers' get_1d_rotary_pos_embed(dim, ...) per axis (FluxPosEmbed) written "
          "with the attention head's dim in the exponent, theta^(-2k/head_dim); with axes of other sizes than one "
          "another the axes' ladders are no one base's")
EXPECT = {"head_dim": 24, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [4, 8, 12],
          "dtype": "float32"}


def make(expect):
    return build(expect, ladder=lambda e: tuple((k, e.head_dim) for k, _ in per_axis_ladder(e)))
