"""A bias lookup that buckets query - key: keys after the query read the entries of keys before it."""

from ropespec.implementations.zoo._biases import t5_lookup

TARGETS = ("t5-bias.lookup", "t5-bias.sign-split")
DIAGNOSIS = "halves-swapped"
FAMILY = "t5-bias"
SOURCE = ("relative_position = context_position - memory_position in compute_bias, the reverse of transformers' "
          "T5Attention.compute_bias (memory - context)")


def make(expect):
    return t5_lookup(sign=-1)
