"""Adds +m (i - j): the bias grows with the distance, favouring the keys furthest away."""

from ropespec.implementations.zoo._biases import alibi

TARGETS = ("alibi.softmax-rows", "alibi.slopes")
DIAGNOSIS = "bias-sign"
FAMILY = "alibi"
SOURCE = "relative positions taken as i - j where the bias is slope x (j - i), as BLOOM's m j relies on (arXiv 2108.12409)"


def make(expect):
    return alibi(expect, bias=lambda m, i, j: m * (i - j))
