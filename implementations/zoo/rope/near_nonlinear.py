"""Near the threshold: a rotation plus a tiny product term, 300 u (x_a x_b) / (|x_a| + |x_b|) on both dims of
each pair (a fused kernel that mixes the two inputs of a pair once too often): not linear, by a few times
the rounding that linearity allows, and invisible to any probe with one nonzero input."""

import numpy as np

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import unit_roundoff

TARGETS = ("rope.linearity",)
DIAGNOSIS = "not-a-rotation"
SOURCE = "synthetic: the same-angle (linearity) bound's tightness"
EXPECT = {"head_dim": 64, "dtype": "float32", "max_position": 4096}
NEAR = True


def make(expect):
    k = 300 * unit_roundoff(expect.dtype)
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))

    def post(x, out, positions):
        xf = np.asarray(x, dtype=np.float64)
        cross = xf[:, a] * xf[:, b] / (np.abs(xf[:, a]) + np.abs(xf[:, b]) + 1e-300)
        y = out.astype(np.float64)
        y[:, a] += k * cross
        y[:, b] += k * cross
        return y.astype(out.dtype)

    return build(expect, post=post)
