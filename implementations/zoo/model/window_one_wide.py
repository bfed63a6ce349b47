"""A sliding layer of window 4 whose mask keeps one key more: the query and the 4 keys before it."""

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.window",)
DIAGNOSIS = "window-reach"
SOURCE = "transformers #39408 and #40163 (a sliding window one key too wide)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}
#: its layers as it declares them: a sliding layer of 4 keys, then a global one
WINDOWS = [4, None]


class _OneWide(Decoder):
    def _attention(self, layer, x, positions, mask, kv, past):
        if self._window is not None:
            self._window += 1  # the mask's comparison, > where >= was meant
        return super()._attention(layer, x, positions, mask, kv, past)


def make(expect):
    return _OneWide(expect, windows=WINDOWS)
