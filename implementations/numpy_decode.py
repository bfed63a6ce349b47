"""A decode-mode RoPE in numpy: a factory returning a decoder with ``prefill`` and ``step``.

The decoder keeps the keys unrotated and rotates all of them again with the table of the current
sequence length at every call (the numpy implementation does the rotation), so dynamic NTK and
LongRoPE stay consistent with a fresh full pass when the length crosses the original one.
"""

from __future__ import annotations

import numpy as np

from implementations.numpy_rope import make as make_rope

ARRAY = "numpy"


class Decoder:
    def __init__(self, expect):
        self.rope = make_rope(expect)
        self.keys = np.zeros((0, expect.head_dim))
        self.positions = np.zeros(0, dtype=np.int64)

    def prefill(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        self.keys = np.array(x, dtype=np.float64)
        self.positions = np.array(positions, dtype=np.int64)
        return self.rope(self.keys, self.positions).astype(x.dtype)

    def step(self, x: np.ndarray, position: int) -> np.ndarray:
        self.keys = np.concatenate([self.keys, np.asarray(x, dtype=np.float64).reshape(1, -1)])
        self.positions = np.append(self.positions, position)
        return self.rope(self.keys, self.positions).astype(x.dtype)


def make(expect):
    if expect.dtype not in ("float64", "float32"):
        raise NotImplementedError(f"numpy decoder computes float64 and float32, not {expect.dtype}")
    return Decoder(expect)
