"""A bias lookup whose heads take the table's columns last first: head h gets head H - 1 - h's learned bias."""

from ropespec.implementations.zoo._biases import t5_lookup

TARGETS = ("t5-bias.lookup",)
DIAGNOSIS = "layout"
FAMILY = "t5-bias"
SOURCE = ("the (query, key, head) values permuted to heads in the wrong order where compute_bias permutes "
          "[2, 0, 1] (transformers' T5Attention.compute_bias)")


def make(expect):
    return t5_lookup(reversed_heads=True)
