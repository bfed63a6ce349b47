"""Scales the keys by zeta^(n / scale_base) like the queries, where they take its inverse: scores grow with position."""

from ropespec.implementations.zoo._biases import xpos

TARGETS = ("xpos.inverse-scale", "xpos.conformance")
DIAGNOSIS = "xpos-scale"
FAMILY = "xpos"
SOURCE = ("one scale tensor applied to both q and k (rotary-embedding-torch's rotate_queries_and_keys passes scale "
          "and scale ** -1; Sun et al., arXiv 2212.10554)")


def make(expect):
    return xpos(expect, k_power=lambda p, c: p - c)
