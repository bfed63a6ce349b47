"""Computes every batch row's bias from row 0's positions: a left-padded row (its real tokens from 0) gets the first
row's distances."""

from ropespec.implementations.zoo._biases import alibi_batched

TARGETS = ("alibi.per-head",)
DIAGNOSIS = "layout"
FAMILY = "alibi"
LAYOUT = "bhqk"
SOURCE = "positions taken from one row of the attention mask and broadcast over the batch, where left padding gives " \
         "each row its own (transformers #22161: positions not derived from the mask)"


def make(expect):
    return alibi_batched(expect, first_row=True)
