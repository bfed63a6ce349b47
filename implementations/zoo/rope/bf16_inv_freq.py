"""Casts the inverse frequencies to bfloat16 before the float32 product p * inv_freq."""

from ropespec.implementations.zoo._base import build
from ropespec.spec.dtypes import round_to

TARGETS = ("rope.conformance",)
DIAGNOSIS = "angle-precision"
SOURCE = "sglang-jax #1472 (inv_freq cast to bf16 before the product: 72/128 outputs wrong at 4095); transformers #25681"
EXPECT = {}


def _angle(p, theta):
    th = round_to(theta, "bfloat16")
    return round_to(round_to(p, "float32")[:, None] * th[None, :], "float32")


def make(expect):
    return build(expect, angles=_angle)
