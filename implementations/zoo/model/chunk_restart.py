"""Restarts a prefill's positions at 0 in every chunk after the first: positions counted within the call, not after
the cached ones."""

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.positions", "model.cache")
DIAGNOSIS = "cache-offset"
SOURCE = "vLLM #10388 and #10403 (chunked prefill's positions); transformers #43082"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Restart(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None):
        if cache is not None and positions is None and len(ids[0]) > 1:
            positions = self.inferred(mask[:, -len(ids[0]):] if mask is not None else (ids * 0 + 1))
        return super().forward(ids, positions, mask, cache)


def make(expect):
    return _Restart(expect)
