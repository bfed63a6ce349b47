"""Attends to a row's left padding: the mask's pads are not excluded from the keys."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.padding",)
DIAGNOSIS = "padding-mask"
SOURCE = "fla #902; transformers #22161 (left-padded rows attending their pads)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _SeesPads(Decoder):
    def _attention(self, layer, x, positions, mask, kv, past):
        return super()._attention(layer, x, positions, np.ones_like(mask), kv, past)


def make(expect):
    return _SeesPads(expect)
