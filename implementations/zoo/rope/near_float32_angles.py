"""Near the threshold: float32 angles where the strict class was promised, at positions below 32 only, so
that its error is a few times the strict bound (K_ROT ulp of the pair) and no more."""

from ropespec.implementations.zoo.rope.float32_angles import _angle
from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "angle-precision"
SOURCE = ("a float64 kernel whose frequency table was built in float32; checked only on a short sequence, "
          "where its error is a few ulp (the component bound's tightness)")
EXPECT = {"head_dim": 64, "dtype": "float32", "angle_dtype": "exact", "inv_freq_dtype": "exact", "max_position": 32}
NEAR = True  # its worst error is 2 to 10 times the bound it breaks: a bound 10 times too loose would pass it


def make(expect):
    return build(expect, angles=_angle)
