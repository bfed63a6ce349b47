"""Ends the exact buckets at a quarter of one sign's buckets: distances 4 to 7 of 32 share log-spaced buckets."""

from ropespec.implementations.zoo._biases import t5_bucket

TARGETS = ("t5-bias.exact-below",)
DIAGNOSIS = "bucket-boundary"
FAMILY = "t5-bias"
SOURCE = "num_buckets halved twice, once for the sign and again inside (transformers' T5Attention._relative_position_bucket)"


def make(expect):
    return t5_bucket(max_exact=lambda n, num_buckets: max(n // 4, 1))
