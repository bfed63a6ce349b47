"""Declares a sliding layer and a global one, and windows both: the global layer sees only the sliding layer's 4 keys."""

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.window",)
DIAGNOSIS = "window-reach"
SOURCE = "vllm-project/vllm #51756 (the global layers of a mixed sliding/global model windowed)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}
WINDOWS = [4, None]


class _AllWindowed(Decoder):
    def _attention(self, layer, x, positions, mask, kv, past):
        self._window = 4  # the model's one window, whatever the layer's type
        return super()._attention(layer, x, positions, mask, kv, past)


def make(expect):
    return _AllWindowed(expect, windows=WINDOWS)
