"""Verifies drafted tokens one position past their own: once decoding has begun, a call of several tokens after the
cache (a verification) starts at the cache's length plus one."""

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.drafts",)
DIAGNOSIS = "draft-positions"
SOURCE = "sgl-project/sglang #25015 (draft positions one past their tokens)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _OnePast(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        t = len(ids[0])
        if cache is not None and cache.get("decoding") and t > 1 and positions is None and mask is not None:
            positions = self.inferred(mask)[:, -t:] + 1
        logits, new = super().forward(ids, positions, mask, cache, documents)
        new["decoding"] = bool(cache is not None and (t == 1 or cache.get("decoding")))
        return logits, new


def make(expect):
    return _OnePast(expect)
