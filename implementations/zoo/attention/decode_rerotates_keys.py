"""A KV cache of rotated keys that rotates them again when it reads them."""

import numpy as np

from ropespec.implementations.attention_decode import Decoder

TARGETS = ("decode.attention-consistency",)
DIAGNOSIS = "double-rotation"
SOURCE = "caches that store rotated keys and apply RoPE again on read"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


class Rerotates(Decoder):
    def __init__(self, expect):
        super().__init__(expect)
        self.pos = np.zeros(0, dtype=np.int64)

    def _attend(self, qr):
        k, self.k = self.k, self.rope(self.k, self.pos)  # the bug: rotated again when read
        try:
            return super()._attend(qr)
        finally:
            self.k = k

    def prefill(self, q, k, v, positions):
        self.pos = np.asarray(positions, dtype=np.int64)
        return super().prefill(q, k, v, positions)

    def step(self, q, k, v, position):
        self.pos = np.append(self.pos, position)
        return super().step(q, k, v, position)


def make(expect):
    return Rerotates(expect)
