"""Hands the slopes to the heads in reverse order: head 0 gets the gentlest slope, the last head the steepest."""

from ropespec.implementations.zoo._biases import alibi, alibi_slopes

TARGETS = ("alibi.slopes",)
DIAGNOSIS = "slope-order"
FAMILY = "alibi"
SOURCE = "slopes built with torch.arange(n_heads, 0, -1) in ports of Press et al.'s get_slopes (arXiv 2108.12409)"


def make(expect):
    return alibi(expect, slopes=lambda h: alibi_slopes(h, expect.params("alibi").alibi_bias_max)[::-1].copy())
