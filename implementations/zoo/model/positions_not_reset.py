"""Packs documents with a mask per document and positions that never restart: each document continues the positions of
the documents before it."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.packing",)
DIAGNOSIS = "document-positions"
SOURCE = "pytorch/torchtitan #2559 and #2560 (RoPE positions never reset per packed document); allenai/OLMo-core #591"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _NotReset(Decoder):
    def packed_positions(self, lengths):
        p = np.arange(int(sum(lengths)))[None]
        return p[..., None].repeat(self.e.n_axes, axis=-1) if self.e.multi_axis else p


def make(expect):
    return _NotReset(expect)
