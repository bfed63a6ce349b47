"""A FLUX-style 3-D RoPE with one ladder theta^(-2j/r) over every pair, where each axis has its own theta^(-2k/d_a)."""

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.conformance", "axes.one-axis")
DIAGNOSIS = "ladder-shared"
SOURCE = ("the frequency exponent normalised by the whole rotary dim instead of each axis's dims (diffusers "
          "FluxPosEmbed builds one get_1d_rotary_pos_embed per axis)")
EXPECT = {"head_dim": 24, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [4, 8, 12],
          "dtype": "float32"}


def make(expect):
    return build(expect, ladder=lambda e: tuple((j, e.rotary_dim) for j in range(e.n_pairs)))
