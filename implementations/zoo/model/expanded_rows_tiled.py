"""Decodes each step at the cache's length plus each row's rope_deltas, kept in its cache from the prefill (the offset
from the cache's length to the row's own next position), and continues each row several times by repeating its rows in
place but tiling the deltas: with two rows of unequal padding, row 0's second copy decodes at row 1's offset."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.drafts",)
DIAGNOSIS = "expanded-positions"
SOURCE = "vllm-project/vllm #10350 (rows expanded for n samples without their rope_deltas)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Tiled(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        past = cache["length"] if cache else 0
        if positions is None and mask is not None and cache is not None and "deltas" in cache and len(ids[0]) == 1:
            positions = past + cache["deltas"]  # a decoding step: the cache's length plus the row's deltas
        logits, new = super().forward(ids, positions, mask, cache, documents)
        if mask is not None:
            m = np.asarray(mask)
            new["deltas"] = cache["deltas"] if cache and "deltas" in cache else (m.sum(axis=1) - m.shape[1])[:, None]
        return logits, new

    @staticmethod
    def expand(logits, mask, cache, copies: int):
        logits, mask, new = Decoder.expand(logits, mask, cache, copies)
        if "deltas" in cache:
            new["deltas"] = np.tile(cache["deltas"], (copies, 1))  # rows repeated in place, the deltas tiled
        return logits, mask, new


def make(expect):
    return _Tiled(expect)
