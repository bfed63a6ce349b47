"""Divides the bias by the query's position plus one: a length-normalised ALiBi whose bias depends on where it is."""

from ropespec.implementations.zoo._biases import alibi

TARGETS = ("alibi.relative-position",)
DIAGNOSIS = "absolute-position"
FAMILY = "alibi"
SOURCE = "a bias scaled by the sequence length seen so far, which ALiBi's extrapolation rests on not doing (arXiv 2108.12409)"


def make(expect):
    return alibi(expect, bias=lambda m, i, j: -m * (i - j) * 64 / (i + 64))
