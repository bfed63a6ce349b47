"""Builds the batched bias as (heads, batch, n_q, n_k) and reshapes it to (batch, heads, n_q, n_k): every (row, head)
gets another's bias."""

from ropespec.implementations.zoo._biases import alibi_batched

TARGETS = ("alibi.per-head",)
DIAGNOSIS = "layout"
FAMILY = "alibi"
LAYOUT = "bhqk"
SOURCE = "a reshape where a transpose was meant: BLOOM's build_alibi_tensor reshapes (batch, heads, seq) to " \
         "(batch x heads, 1, seq), and the order of the two axes is what its attention reads"


def make(expect):
    return alibi_batched(expect, heads_first=True)
