"""Takes the decay's exponents from positions wrapped at 1024 (a cached scale table reused modulo its length)."""

from ropespec.implementations.zoo._biases import xpos

TARGETS = ("xpos.relative-position",)
DIAGNOSIS = "absolute-position"
FAMILY = "xpos"
SOURCE = ("a scale cache of cache_max_seq_len rows indexed past its end (rotary-embedding-torch's cached_scales, "
          "lucidrains/rotary-embedding-torch)")


def make(expect):
    return xpos(expect, q_power=lambda p, c: p % 1024 - c, k_power=lambda p, c: -(p % 1024 - c))
