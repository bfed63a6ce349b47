"""Caches keys already rotated: after the length crosses the original one, old keys keep the old table."""

import numpy as np

from ropespec.implementations.numpy_rope import make as make_rope

TARGETS = ("decode.consistency",)
DIAGNOSIS = "scaling"
SOURCE = "transformers #25104 (dynamic NTK: cached keys keep the old base); PR #33129 (Phi-3 LongRoPE); vLLM #3488"
EXPECT = {"head_dim": 16, "max_position": 64,
          "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 16}}


class StaleDecoder:
    def __init__(self, expect):
        self.rope = make_rope(expect)
        self.cache = None

    def prefill(self, x, positions):
        self.cache = self.rope(np.asarray(x, dtype=np.float64), np.asarray(positions))
        return self.cache.astype(x.dtype)

    def step(self, x, position):
        # the new key is rotated as part of a call of the current length; old keys are not redone
        n = self.cache.shape[0]
        pad = np.zeros((n + 1, x.shape[-1]))
        pad[n] = np.asarray(x, dtype=np.float64).reshape(-1)
        fresh = self.rope(pad, np.append(np.arange(n), position))
        self.cache = np.concatenate([self.cache, fresh[n:]])
        return self.cache.astype(x.dtype)


def make(expect):
    return StaleDecoder(expect)
