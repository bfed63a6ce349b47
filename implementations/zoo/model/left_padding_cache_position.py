"""Infers every row's positions from the cache's length alone (cache_position), not from its mask: left-padded rows
are turned at positions counting their pads."""

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.positions", "model.canonical")
DIAGNOSIS = "padding-shift"
SOURCE = "unsloth #3699, fixed by PR #4100 (cache_position taken as every row's position_ids under left padding)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _CachePosition(Decoder):
    def inferred(self, mask):
        n = mask.shape[1]
        return super().inferred(mask * 0 + 1)[:, :n]  # arange over the columns: the pads counted


def make(expect):
    return _CachePosition(expect)
