"""Turns every decoding step's key at position 0: the positions are arange(seq_length) of the call, no cache offset."""

import numpy as np

from ropespec.implementations.numpy_rope import make as make_rope

TARGETS = ("decode.consistency",)
DIAGNOSIS = "position-offset"
SOURCE = "mlx-vlm #1983 (get_rope_index takes arange(seq_length) without the cache offset: every generated token at 0)"
EXPECT = {"head_dim": 16, "max_position": 64}


class AtZero:
    """Its positions are the call's own token indices, as get_rope_index's arange(seq_length): right for the
    prompt, which starts at 0, and 0 for every decoding step of one token."""

    def __init__(self, expect):
        self.rope = make_rope(expect)
        self.cache = None

    def _turn(self, x):
        x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
        return self.rope(x, np.arange(len(x)))

    def prefill(self, x, positions):
        self.cache = self._turn(x)
        return self.cache.astype(x.dtype)

    def step(self, x, position):
        self.cache = np.concatenate([self.cache, self._turn(x)])
        return self.cache.astype(x.dtype)


def make(expect):
    return AtZero(expect)
