"""A fast sin/cos that reduces its argument with a float32 product x * (1/2pi), like GPU intrinsics."""

import numpy as np

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import round_to

TARGETS = ("rope.conformance",)
DIAGNOSIS = "angle-precision"
SOURCE = "a CUDA kernel's __sinf/__cosf drift to 1e-2 at position 131071 while every test used positions <= 40"
#: the kernel promised accurate (float64) angles; its argument reduction is float32
EXPECT = {"angle_dtype": "float64", "inv_freq_dtype": "float64"}
_INV_2PI = float(np.float32(1 / (2 * np.pi)))


def _angle(p, theta):
    x = p[:, None] * theta[None, :]  # an accurate float64 angle...
    turns = round_to(x * _INV_2PI, "float32")  # ...reduced through a float32 product, as __sinf does
    return 2 * np.pi * (turns - np.round(turns))


def make(expect):
    return build(expect, angles=_angle)
