"""Near the threshold: ggml's float32 recurrence theta_i = theta_(i-1) s with each product rounded and then moved ten
float32 ulps toward zero: a ladder ten roundings worse per pair than the class allows, read as another base."""

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "base"
SOURCE = ("synthetic, on llama.cpp's ggml_rope_cache_init (theta *= theta_scale, one float32 product a pair): the "
          "float32 class's recurrence bound i (u + d_s) is tight, ggml's own recurrence holding at about 0.45 of it")
EXPECT = {"head_dim": 64, "dtype": "float32", "max_position": 4096}
NEAR = True  # its worst error is 2 to 10 times the bound it breaks: a bound 10 times too loose would pass it
#: the ulps each product is moved toward zero past its rounding
ULPS = 10


def _ladder(expect, seq_len):
    f32 = np.float32
    step = f32(np.power(f32(expect.rope_theta), f32(-2.0) / f32(expect.rotary_dim)))
    out, theta = [], f32(1.0)
    for _ in range(expect.rotary_dim // 2):
        out.append(float(theta))
        theta = f32(theta * step)
        for _ in range(ULPS):
            theta = np.nextafter(theta, f32(0))
    return np.array(out), 1.0


def make(expect):
    return build(expect, table=_ladder)
