"""Gives the queries zeta^(-m / scale_base) and the keys zeta^(n / scale_base): the decay runs the other way."""

from ropespec.implementations.zoo._biases import xpos

TARGETS = ("xpos.conformance",)
DIAGNOSIS = "xpos-decay"
FAMILY = "xpos"
SOURCE = "scale and its inverse handed to the keys and queries in each other's place (Sun et al., arXiv 2212.10554)"


def make(expect):
    return xpos(expect, q_power=lambda p, c: -(p - c), k_power=lambda p, c: p - c)
