"""Takes the frequency of the next pair: theta'_i = theta_(i+1) (an off-by-one in the exponent's index)."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "base"
SOURCE = "inv_freq built from arange(1, r/2 + 1) instead of arange(0, r/2)"


def _angles(p, theta):
    step = theta[1] if len(theta) > 1 else theta[0] ** 2  # base^(-2/r)
    return p[:, None] * (theta * step)[None, :]


def make(expect):
    return build(expect, angles=_angles)
