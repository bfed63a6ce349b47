"""Turns each decoding step at the cache's length (its left pads counted); the prefill's positions come from the mask."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.positions", "model.padding", "model.drafts")
DIAGNOSIS = "padding-shift"
SOURCE = ("thu-nics/C2C PR #19 (the prompt's positions from the mask, its decoding steps without them: a left-padded "
          "row's new tokens jump ahead by its pad count)")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _StepsAtCacheLength(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        if positions is None and cache:  # a decoding step: every row at the cache's length, whatever its mask
            past, (b, t) = cache["length"], np.shape(ids)
            positions = np.broadcast_to(past + np.arange(t), (b, t)).copy()
        return super().forward(ids, positions=positions, mask=mask, cache=cache, documents=documents)


def make(expect):
    return _StepsAtCacheLength(expect)
