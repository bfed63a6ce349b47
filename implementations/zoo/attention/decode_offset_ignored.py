"""A decoder whose step rotates the new query without the sequence's offset (keys keep theirs)."""

import numpy as np

from ropespec.implementations.attention_decode import Decoder

TARGETS = ("decode.attention-consistency",)
DIAGNOSIS = "position-offset"
SOURCE = "rotary-embedding-torch #11 (offset missing from the cache key); transformers #22161 (left padding)"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


class OffsetIgnored(Decoder):
    def prefill(self, q, k, v, positions):
        self.offset = int(np.asarray(positions)[0])
        return super().prefill(q, k, v, positions)

    def step(self, q, k, v, position):
        p = np.array([position])
        self.k = np.concatenate([self.k, self.rope(np.asarray(k, dtype=np.float64).reshape(1, -1), p)])
        self.v = np.concatenate([self.v, np.asarray(v, dtype=np.float64).reshape(1, -1)])
        # the bug: the query's position misses the offset the cached keys were rotated with
        return self._attend(self.rope(np.asarray(q, dtype=np.float64).reshape(1, -1), p - self.offset))


def make(expect):
    return OffsetIgnored(expect)
