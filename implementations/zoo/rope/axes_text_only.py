"""M-RoPE that reads every axis from the temporal column: text-only code, exact for text tokens and wrong for images."""

import numpy as np

from ropespec.implementations.zoo._axes import build

TARGETS = ("rope.conformance", "axes.separation")
DIAGNOSIS = "axis-ignored"
SOURCE = "LightX2V #1416 (a silent 1-D fallback); sglang #35744 (a fused kernel dropping the h and w rows)"
EXPECT = {"head_dim": 24, "rope_theta": 1000000.0, "mrope_section": [2, 4, 6], "dtype": "float32"}


def make(expect):
    return build(expect, positions_map=lambda p: np.repeat(p[:, :1], p.shape[1], axis=1))
