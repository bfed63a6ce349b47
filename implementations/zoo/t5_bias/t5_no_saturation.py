"""Drops the min with the last bucket: distances past max_distance run into buckets that do not exist."""

from ropespec.implementations.zoo._biases import t5_bucket

TARGETS = ("t5-bias.saturates",)
DIAGNOSIS = "bucket-range"
FAMILY = "t5-bias"
SOURCE = "the torch.min(..., num_buckets - 1) of transformers' T5Attention._relative_position_bucket left out"


def make(expect):
    return t5_bucket(saturate=False)
