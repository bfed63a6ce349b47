"""thd layout whose every packed sequence starts at sequence 0's offset: the other sequences' offsets are ignored
(each sequence is rotated as sequence 0 would be)."""

import numpy as np

from ropespec.implementations.numpy_layout import _rows
from ropespec.spec.definitions import token_positions

TARGETS = ("rope.layout", "rope.conformance", "rope.conformance:long_calls")
DIAGNOSIS = "layout"
SOURCE = ("Megatron-LM / TransformerEngine packed sequences (thd) with context parallelism: every sequence given "
          "sequence 0's positions")
LAYOUT = "thd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    rotate = _rows(expect)

    def apply(x, positions, cu_seqlens):
        first = np.full_like(np.asarray(positions), np.asarray(positions)[0])
        return rotate(x, token_positions(first, cu_seqlens)[:, None])

    return apply
