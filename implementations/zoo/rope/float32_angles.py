"""Forms the angles in float32 (transformers' way) where float64 angles were promised."""

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import round_to

TARGETS = ("rope.conformance",)
DIAGNOSIS = "angle-precision"
SOURCE = "a kernel documented as computing angles in float64 that inherited a float32 freqs table"
EXPECT = {"angle_dtype": "float64", "inv_freq_dtype": "float64"}


def _angle(p, theta):
    return round_to(round_to(p, "float32")[:, None] * round_to(theta, "float32")[None, :], "float32")


def make(expect):
    return build(expect, angles=_angle)
