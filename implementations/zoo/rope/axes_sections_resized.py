"""M-RoPE with sections of other sizes: [4, 4, 4] pairs where the config says [2, 4, 6]."""

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.conformance", "axes.separation")
DIAGNOSIS = "axes-sections"
SOURCE = "diffusers #12538 (Wan's axis dims computed for another head dim); timm's M-RoPE sections clamped to fit"
EXPECT = {"head_dim": 24, "rope_theta": 1000000.0, "mrope_section": [2, 4, 6], "dtype": "float32"}


def make(expect):
    return build(expect, pair_axes=lambda e: e.replace(mrope_section=[4, 4, 4]).pair_axes())
