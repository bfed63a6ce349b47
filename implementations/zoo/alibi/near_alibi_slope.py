"""Scales every slope by 1 + 6 u (float32's unit roundoff): a bias 3 times over the strict float32 bound."""

import numpy as np

from ropespec.implementations.zoo._biases import alibi, alibi_slopes

TARGETS = ("alibi.softmax-rows",)
DIAGNOSIS = "slopes"
FAMILY = "alibi"
EXPECT = {"dtype": "float32", "angle_dtype": "exact", "inv_freq_dtype": "exact"}
NEAR = True
SOURCE = "slopes formed by a chain of float32 pow and division, each off by an ulp (Press et al.'s get_slopes, arXiv 2108.12409)"


def make(expect):
    return alibi(expect, slopes=lambda h: alibi_slopes(h, expect.params("alibi").alibi_bias_max) * (1 + 6 * 2.0**-24))
