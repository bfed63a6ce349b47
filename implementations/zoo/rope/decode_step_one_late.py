"""Turns every decoding step's key one position late: the seen-token count is advanced before it is read."""

import numpy as np

from ropespec.implementations.numpy_rope import make as make_rope

TARGETS = ("decode.consistency",)
DIAGNOSIS = "position-offset"
SOURCE = ("flash-linear-attention #766 (layer 0 advances the cache's seen-token count before the next layer reads it: "
          "from the second layer on a step is one position late)")
EXPECT = {"head_dim": 16, "max_position": 64}


class OneLate:
    """Its positions come from its own seen-token count, as a cache's seqlen_offset: the prompt from 0, and each step
    at the count after it is advanced for the step, one past the step's own position."""

    def __init__(self, expect):
        self.rope = make_rope(expect)
        self.cache, self.seen = None, 0

    def prefill(self, x, positions):
        n = len(x)
        self.cache = self.rope(np.asarray(x, dtype=np.float64), self.seen + np.arange(n))
        self.seen += n
        return self.cache.astype(x.dtype)

    def step(self, x, position):
        self.seen += 1
        key = self.rope(np.asarray(x, dtype=np.float64).reshape(1, -1), np.array([self.seen]))
        self.cache = np.concatenate([self.cache, key])
        return self.cache.astype(x.dtype)


def make(expect):
    return OneLate(expect)
