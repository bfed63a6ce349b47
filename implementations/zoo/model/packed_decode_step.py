"""Reads packed documents off the given positions with a cache too: a decoding step without an attention mask starts a
document of its own, and sees none of the cached keys."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.packing",)
DIAGNOSIS = "taken-for-packed"
SOURCE = "transformers #32241 (a decoding step taken for a packed sequence)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _StepPacked(Decoder):
    def documents_of(self, ids, positions, mask, cache, documents, past):
        if cache is not None and mask is None and positions is not None and documents is None:
            t = np.shape(ids)[1]
            new = np.ones((len(ids), t), dtype=np.int64)  # the call's tokens: a document after the cached ones
            return new, np.concatenate([np.zeros((len(ids), past), dtype=np.int64), new], axis=1)
        return super().documents_of(ids, positions, mask, cache, documents, past)


def make(expect):
    return _StepPacked(expect)
