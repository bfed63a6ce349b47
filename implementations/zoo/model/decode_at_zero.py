"""Turns every decoded token at position 0: the cache's offset never added to a step's positions."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.positions", "model.cache")
DIAGNOSIS = "cache-offset"
SOURCE = "mlx-vlm #1755 and #1983 (every decoded token at position 0)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _AtZero(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None):
        if cache is not None and positions is None and np.shape(ids)[1] == 1:
            positions = np.zeros(np.shape(ids), dtype=np.int64)
        return super().forward(ids, positions, mask, cache)


def make(expect):
    return _AtZero(expect)
