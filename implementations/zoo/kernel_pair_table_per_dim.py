"""An apply kernel given cos/sin per pair that indexes them per dim: pair i reads entry 2i (mod r/2)."""

import numpy as np

TARGETS = ("kernel.rotation",)
DIAGNOSIS = "layout"
SOURCE = ("a kernel written for transformers' per-dim interleaved table (repeat_interleave) handed vLLM's per-pair "
          "cache (issue 17's layout zoo; out of bounds on a GPU it reads what lies past the table)")
FAMILY = "kernel"
EXPECT = {"head_dim": 64, "dtype": "float32", "convention": "interleaved"}


def make(expect):
    k = expect.rotary_dim // 2
    idx = (2 * np.arange(k)) % k  # the per-dim index 2i, wrapped: a GPU reads past the table instead

    def kernel(x, cos, sin):
        xf = np.asarray(x, dtype=np.float64)
        c, s = np.asarray(cos, dtype=np.float64)[:, idx], np.asarray(sin, dtype=np.float64)[:, idx]
        out = xf.copy()
        xa, xb = xf[:, 0 : 2 * k : 2], xf[:, 1 : 2 * k : 2]
        out[:, 0 : 2 * k : 2] = xa * c - xb * s
        out[:, 1 : 2 * k : 2] = xa * s + xb * c
        return out.astype(x.dtype)

    kernel.table = "pair"
    return kernel
