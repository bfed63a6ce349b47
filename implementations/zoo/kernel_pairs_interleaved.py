"""An apply kernel for interleaved pairs (2i, 2i + 1) called on a model whose pairs are (i, i + r/2)."""

import numpy as np

TARGETS = ("kernel.rotation",)
DIAGNOSIS = "convention"
SOURCE = ("flash-attention's apply_rotary_emb(interleaved=...) and vLLM's is_neox_style: the flag set the wrong way "
          "for the checkpoint (transformers #25199: GPT-J style vs NeoX style)")
FAMILY = "kernel"
EXPECT = {"head_dim": 64, "dtype": "float32", "convention": "half"}


def make(expect):
    k = expect.rotary_dim // 2

    def kernel(x, cos, sin):
        xf = np.asarray(x, dtype=np.float64)
        c, s = np.asarray(cos, dtype=np.float64), np.asarray(sin, dtype=np.float64)
        out = xf.copy()
        xa, xb = xf[:, 0 : 2 * k : 2], xf[:, 1 : 2 * k : 2]  # the bug: interleaved pairs
        out[:, 0 : 2 * k : 2] = xa * c - xb * s
        out[:, 1 : 2 * k : 2] = xa * s + xb * c
        return out.astype(x.dtype)

    kernel.table = "pair"
    return kernel
