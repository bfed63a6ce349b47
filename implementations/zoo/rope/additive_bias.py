"""Adds a sinusoidal position vector on top of the rotation (additive and rotary mixed)."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.linearity", "rope.conformance")
DIAGNOSIS = "not-a-rotation"
SOURCE = "an absolute position embedding left in place after switching a model to RoPE"


def _add_pe(x, out, positions):
    d = out.shape[1]
    pe = np.sin(positions[:, None] * 10000.0 ** (-np.arange(d) / d) + 1.0)
    return (out + 1e-3 * pe).astype(out.dtype)


def make(expect):
    return build(expect, post=_add_pe)
