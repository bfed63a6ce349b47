"""Near the threshold: attention whose output moves by a few times its allowed rounding depending on the
parity of the first position (an accumulation order chosen by the absolute position, as a split-K kernel
whose splits follow the position): a shift by an odd number changes it."""

import numpy as np

from ropespec.implementations.zoo._encodings import attend

TARGETS = ("attention.shift-invariance",)
DIAGNOSIS = "absolute-position"
SOURCE = "synthetic: the attention bound's tightness; real cousins are kernels tiled by absolute position"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64", "angle_dtype": "exact", "inv_freq_dtype": "exact"}
NEAR = True
_U = 2.0**-53


def make(expect):
    f = attend(expect)
    d = expect.head_dim

    def g(q, k, v, positions, is_causal):
        out = f(q, k, v, positions, is_causal)
        q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
        # a few dozen ulp of the scores' scale, times the values' scale, signed by the first position's parity
        size = 12 * _U * np.abs(q).sum(axis=1).max() * np.abs(k).sum(axis=1).max() / np.sqrt(d) * np.abs(v).max()
        return out + (size if int(np.asarray(positions)[0]) % 2 else -size)

    return g
