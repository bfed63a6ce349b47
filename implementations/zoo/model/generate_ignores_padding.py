"""A batched generate loop of one's own whose decoding steps ignore left padding: its forward infers every position
from the mask, but the loop hands each step the batch's column count as every row's position."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.positions",)
DIAGNOSIS = "padding-shift"
SOURCE = ("rasbt/reasoning-from-scratch #33 (a batched KV-cache generate loop computing one current position for the "
          "whole batch: a left-padded row decodes its pads later)")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _BatchPositionLoop(Decoder):
    def generate(self, ids, mask=None, steps: int = 2, copies: int = 1):
        ids = np.asarray(ids, dtype=np.int64)
        mask = np.ones(ids.shape, dtype=np.int64) if mask is None else np.asarray(mask, dtype=np.int64)
        logits, cache = self.forward(ids, mask=mask)
        out = []
        for i in range(steps):
            out.append(logits[:, -1].argmax(axis=-1)[:, None])
            if i + 1 < steps:
                mask = np.concatenate([mask, np.ones_like(out[-1])], axis=1)
                column = np.full((len(ids), 1), mask.shape[1] - 1)  # one current position for the whole batch
                logits, cache = self.forward(out[-1], positions=column, mask=mask, cache=cache)
        return np.concatenate(out, axis=1)


def make(expect):
    return _BatchPositionLoop(expect)
