"""An apply kernel given cos/sin per pair that indexes them per dim: pair i reads entry 2i (mod r/2)."""

import numpy as np

from ropespec.implementations.numpy_kernel import make as make_kernel

TARGETS = ("kernel.rotation",)
DIAGNOSIS = "layout"
SOURCE = ("a kernel written for transformers' per-dim interleaved table (repeat_interleave) handed vLLM's per-pair "
          "cache (out of bounds on a GPU it reads what lies past the table)")
FORM = "kernel"
EXPECT = {"head_dim": 64, "dtype": "float32", "convention": "interleaved"}


def make(expect):
    k = expect.rotary_dim // 2
    idx = (2 * np.arange(k)) % k  # the per-dim index 2i, wrapped: a GPU reads past the table instead
    inner = make_kernel(expect, table="pair")

    def kernel(x, cos, sin):
        return inner(x, np.asarray(cos)[:, idx], np.asarray(sin)[:, idx])

    kernel.table = "pair"
    return kernel
