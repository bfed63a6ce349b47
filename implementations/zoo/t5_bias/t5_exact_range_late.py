"""Ends the exact buckets at num_buckets / 2 before halving them by sign: distances up to 15 of 32 buckets stay exact."""

from ropespec.implementations.zoo._biases import t5_bucket

TARGETS = ("t5-bias.conformance",)
DIAGNOSIS = "bucket-boundary"
FAMILY = "t5-bias"
SOURCE = ("max_exact taken from num_buckets before bidirectional halves it (transformers' "
          "T5Attention._relative_position_bucket halves first)")


def make(expect):
    return t5_bucket(max_exact=lambda n, num_buckets: num_buckets // 2)
