"""Computes the causal bias -m (i - j) for every key: where a symmetric bias was meant, later keys get a bonus."""

from ropespec.implementations.zoo._biases import alibi

TARGETS = ("alibi.softmax-rows",)
DIAGNOSIS = "one-sided"
FAMILY = "alibi"
SOURCE = "a decoder's ALiBi reused in a bidirectional encoder (MosaicBERT's symmetric -m |i - j|, arXiv 2312.17482)"


def make(expect):
    return alibi(expect, bias=lambda m, i, j: -m * (i - j))
