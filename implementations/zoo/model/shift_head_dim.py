"""Re-rotates its cached keys, in a context shift, over the whole head with the head's own ladder, where only rotary_dim
dims turn: a partial-rotary model's shifted keys are not those turned at the shifted positions."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder
from ropespec.implementations.numpy_rope import make as make_rope

TARGETS = ("model.shift",)
DIAGNOSIS = "kv-shift"
SOURCE = "ggml-org/llama.cpp #4889 (llm_build_k_shift turning Phi-2's keys with n_embd_head, 80, where n_rot is 32)"
FAMILY = "model"
EXPECT = {"head_dim": 16, "rotary_dim": 8, "max_position": 4096, "dtype": "float64"}


class _HeadDimShift(Decoder):
    def shift(self, cache, d):
        whole = make_rope(self.e.replace(dtype="float64", rotary_dim=self.e.head_dim))
        layers = []
        for k, v in cache["layers"]:
            b, s, h, dim = k.shape
            rows = k.transpose(0, 2, 1, 3).reshape(b * h * s, dim)
            turned = whole(rows, np.full(b * h * s, d, dtype=np.int64))
            layers.append((turned.reshape(b, h, s, dim).transpose(0, 2, 1, 3), v))
        return {"length": cache["length"], "layers": layers}


def make(expect):
    return _HeadDimShift(expect)
