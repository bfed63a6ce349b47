"""Adds a sinusoidal embedding of each token's absolute position to its token embedding besides turning q and k by
RoPE (a port that kept its base model's absolute position embeddings): the positions handed the RoPE are right, and
the logits move when every position moves by a constant, and a shifted cache is not told from it (model.shift says
absolute-position, not kv-shift)."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.offset", "model.shift")
DIAGNOSIS = "absolute-position"
SOURCE = ("seed tutorial 004 (additive cross terms): a model converted to RoPE that kept its absolute position "
          "embeddings, here in a whole model, where its positions cannot show it and its logits at two offsets do")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Added:
    """A token embedding table whose rows come out with ``extra`` (each token's absolute embedding) added."""

    def __init__(self, table, extra):
        self.table, self.extra = table, extra

    def __getitem__(self, ids):
        return self.table[ids] + self.extra


class _Absolute(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        past = cache["length"] if cache else 0
        b, t = np.shape(ids)
        if positions is not None:
            p = np.asarray(positions)
            p = p[..., 0] if p.ndim == 3 else p
        elif documents is not None:
            p = np.broadcast_to(self.packed_positions(documents)[..., 0] if self.e.multi_axis
                                else self.packed_positions(documents), (b, t))
        else:
            m = np.ones((b, past + t), dtype=np.int64) if mask is None else np.asarray(mask)
            p = np.cumsum(m, axis=1)[:, past:] - 1
        width = self.embed.shape[1]
        freq = 1.0 / 10000 ** (np.arange(0, width, 2) / width)
        angle = p[..., None] * freq
        table, self.embed = self.embed, _Added(self.embed, np.concatenate([np.sin(angle), np.cos(angle)], axis=-1))
        try:
            return super().forward(ids, positions, mask, cache, documents)
        finally:
            self.embed = table


def make(expect):
    return _Absolute(expect)
