"""Gives every head count the geometric slopes 2^(-8 (h + 1) / H), the rule of a power of two, where H is none."""

import numpy as np

from ropespec.implementations.zoo._biases import alibi

TARGETS = ("alibi.slopes", "alibi.softmax-rows")
DIAGNOSIS = "slopes"
FAMILY = "alibi"
SOURCE = ("ofirpress/attention_with_linear_biases#5: get_slopes' rule for head counts that are no power of two, which "
          "a plain 2^(-8 (h + 1) / H) misses")


def make(expect):
    return alibi(expect, slopes=lambda h: 2.0 ** (-expect.params("alibi").alibi_bias_max * (np.arange(h) + 1) / h))
