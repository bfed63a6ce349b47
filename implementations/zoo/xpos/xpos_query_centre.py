"""Centres the queries' exponent at 0 and the keys' at the call's middle: the scales do not cancel and drift with it."""

from ropespec.implementations.zoo._biases import xpos

TARGETS = ("xpos.inverse-scale", "xpos.relative-position")
DIAGNOSIS = "xpos-scale"
FAMILY = "xpos"
SOURCE = ("rotary-embedding-torch's rotate_queries_with_cached_keys: get_scale(seq[-q_len:]) centres the queries at "
          "q_len // 2, the keys at k_len // 2 (lucidrains/rotary-embedding-torch)")


def make(expect):
    return xpos(expect, q_power=lambda p, c: p)
