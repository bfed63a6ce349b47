"""Reads the relative position as query - key: keys after the query get the buckets of keys before it."""

from ropespec.implementations.zoo._biases import t5_bucket

TARGETS = ("t5-bias.sign-split",)
DIAGNOSIS = "halves-swapped"
FAMILY = "t5-bias"
SOURCE = ("relative_position = context_position - memory_position, the reverse of transformers' "
          "T5Attention.compute_bias (memory - context)")


def make(expect):
    return t5_bucket(signed=-1)
