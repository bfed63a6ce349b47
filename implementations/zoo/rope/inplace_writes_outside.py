"""In-place bshd kernel that rotates every head of the fused qkv buffer x is a view of (writes outside x)."""

import numpy as np

from ropespec.implementations.numpy_layout import bshd

TARGETS = ("rope.layout",)
DIAGNOSIS = "input-mutated"
SOURCE = "flash-attention's apply_rotary_emb(inplace=True) on a slice of qkv; kernels launched over the buffer's width"
LAYOUT = "bshd"
INPLACE = True
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    inner = bshd(expect)

    def apply(x, positions):
        base = x.base
        whole = base is not None and base.ndim == 4 and base.shape[:2] == x.shape[:2] and base.shape[2] > x.shape[2]
        target = base if whole else x
        target[...] = inner(target, positions)
        return x

    return apply
