"""Keeps its own count of the tokens it has seen across calls, and turns a new sequence's tokens after the last one's."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.stateless",)
DIAGNOSIS = "stale-state"
SOURCE = ("transformers #36013 and #43952 (the rope_deltas of an earlier call reused); transformers #25306 (a table "
          "kept across calls)")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Counter(Decoder):
    seen = 0

    def forward(self, ids, positions=None, mask=None, cache=None):
        if positions is None and cache is None:
            mask = np.ones(np.shape(ids), dtype=np.int64) if mask is None else mask
            positions = self.inferred(np.asarray(mask)) + self.seen
        self.seen += np.shape(ids)[1]
        return super().forward(ids, positions, mask, cache)


def make(expect):
    return _Counter(expect)
