"""Near the threshold: the sinusoidal encoding times 1 + 30 u of the output dtype (a scale folded in at
low precision), a few times the norm bound of the strict class and no more."""

from ropespec.implementations.zoo._encodings import pe
from ropespec.spec.dtypes import unit_roundoff

TARGETS = ("sinusoidal.norm",)
DIAGNOSIS = "scale"
SOURCE = "an embedding scale rounded through a lower precision before it multiplies the table; the sinusoidal norm bound's tightness"
FAMILY = "sinusoidal"
EXPECT = {"head_dim": 64, "dtype": "float32", "angle_dtype": "exact", "inv_freq_dtype": "exact", "max_position": 4096}
NEAR = True


def make(expect):
    k = 1.0 + 30 * unit_roundoff(expect.dtype)
    return pe(expect, post=lambda out, p: out * k)
