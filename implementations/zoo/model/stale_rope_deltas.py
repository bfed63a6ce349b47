"""Keeps the rope_deltas of its first prefill (each row's real length minus its padded length: the offset from the
cache's length to a row's own next position) and reuses them in the decoding steps of every later call, as a Qwen-VL
model whose deltas are computed once and kept on the model: a call with other padding decodes its rows at the earlier
call's offsets. Within one call its positions are the canonical ones, but for a prefill in chunks, whose last chunk
of one token is decoded at the first chunk's deltas (model.positions says so too)."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.stateless",)
DIAGNOSIS = "stale-state"
SOURCE = ("transformers #43952 (the rope_deltas of an earlier generate used by a new one); mlx-vlm #1143 (a decode "
          "reading the deltas another request's prefill wrote)")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Kept(Decoder):
    rope_deltas = None

    def forward(self, ids, positions=None, mask=None, cache=None):
        past = cache["length"] if cache else 0
        if positions is None and mask is not None:
            mask = np.asarray(mask)
            if not past or np.shape(ids)[1] > 1:  # a prefill or a chunk of one: the canonical positions
                positions = self.inferred(mask)
                if self.rope_deltas is None:  # computed once, at the first prefill's end
                    self.rope_deltas = np.where(mask == 1, positions, -1).max(axis=1, keepdims=True) + 1 - mask.shape[1]
                positions = positions[:, past:]
            else:  # a decoding step: the cache's length plus the kept deltas
                positions = past + self.rope_deltas
        return super().forward(ids, positions, mask, cache)


def make(expect):
    return _Kept(expect)
