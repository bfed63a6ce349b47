"""A bias lookup that counts the queries from the first one: a decoding step's query, at position 40, is bucketed as
if at 0."""

from ropespec.implementations.zoo._biases import t5_lookup

TARGETS = ("t5-bias.lookup",)
DIAGNOSIS = "position-offset"
FAMILY = "t5-bias"
SOURCE = ("compute_bias's context positions without past_seen_tokens (the cached decoding step's offset; transformers "
          "#22161 for positions not derived from what came before)")


def make(expect):
    return t5_lookup(from_first_query=True)
