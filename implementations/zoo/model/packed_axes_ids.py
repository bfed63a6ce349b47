"""Reads packed documents off multi-axis ids' temporal row: a vision block, whose temporal position repeats, is split
into documents."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.packing",)
DIAGNOSIS = "taken-for-packed"
SOURCE = "transformers #44911 and #47342 (3-row M-RoPE position_ids taken for packed sequences)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64", "mrope_section": [2, 3, 3]}


class _AxesPacked(Decoder):
    def documents_of(self, ids, positions, mask, cache, documents, past):
        if documents is None and mask is None and cache is None and positions is not None and np.ndim(positions) == 3:
            d = self.split(np.asarray(positions)[..., 0])
            return (d, d) if d is not None else None
        return super().documents_of(ids, positions, mask, cache, documents, past)


def make(expect):
    return _AxesPacked(expect)
