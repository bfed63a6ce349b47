"""Decodes each step at a counter of the next position kept in its cache, and cutting the cache back after a
verification sets the counter one past the verification's start, whatever the number of drafts accepted."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.drafts",)
DIAGNOSIS = "draft-positions"
SOURCE = "transformers #30068 (assisted generation: cache_position advanced by one after several accepted tokens)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Counter(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        t = len(ids[0])
        if positions is None and cache is not None and "next" in cache and t == 1:  # a decoding step: the counter
            positions = cache["next"][:, None] + np.arange(t)[None]
        logits, new = super().forward(ids, positions, mask, cache, documents)
        seen = np.ones((len(ids), new["length"]), dtype=np.int64) if mask is None else np.asarray(mask)
        new["next"] = seen.sum(axis=1)  # the real tokens so far: the next one's position
        new["before"] = new["next"] - t
        return logits, new

    def crop(self, cache, length):
        out = super().crop(cache, length)
        out["next"] = cache["before"] + 1  # one past the verification's first token, however many were accepted
        return out


def make(expect):
    return _Counter(expect)
