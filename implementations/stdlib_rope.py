"""RoPE in pure Python with the standard library's ``math`` only: no numpy.

Takes and returns nested lists of floats (array kind "list"): rows of head_dim floats and a list of
integer positions. Python floats are float64, so this implementation promises float64 output.
"""

from __future__ import annotations

import math

ARRAY = "list"


def make(expect):
    if expect.dtype != "float64":
        raise NotImplementedError(f"pure-Python RoPE computes float64, not {expect.dtype}")
    if expect.method.scales:
        raise NotImplementedError(f"rope_type {expect.rope_type!r} is not implemented")
    r = expect.rotary_dim
    inv_freq = [expect.rope_theta ** (-2.0 * i / r) for i in range(r // 2)]
    pairs = list(zip(expect.pairs(), expect.out_pairs()))  # in place but for rope_interleave

    def rope(x, positions):
        out = []
        for row, p in zip(x, positions):
            y = list(row)
            for ((a, b), (oa, ob)), t in zip(pairs, inv_freq):
                c, s = math.cos(p * t), math.sin(p * t)
                y[oa] = row[a] * c - row[b] * s
                y[ob] = row[a] * s + row[b] * c
            out.append(y)
        return out

    return rope
