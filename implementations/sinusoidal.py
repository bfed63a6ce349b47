"""The sinusoidal encoding of Vaswani et al. (2017), in numpy: a factory ``make(expect)`` returning
``pe(positions, d)`` -> (n, d).

The expectation's ``rope_theta`` is the base and its ``convention`` the layout: "interleaved" puts
sin(p theta_i) at dim 2i and cos at 2i + 1 (the paper); "half" concatenates [sin | cos]
(tensor2tensor, fairseq, GPT-J's create_sinusoidal_positions). Angles are formed and reduced in
double-double arithmetic (:mod:`ropespec.spec.angles`), so the table is accurate at any position below 2**53.
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.angles import cos_sin, sinusoidal_layout, theta_hi_lo


def make(expect):
    if expect.dtype not in ("float64", "float32"):
        raise NotImplementedError(f"numpy sinusoidal encoding computes float64 and float32, not {expect.dtype}")
    plain = expect.replace(rope_scaling=None, rotary_dim=expect.head_dim)

    def pe(positions, d):
        if d != plain.head_dim:
            raise ValueError(f"built for d = {plain.head_dim}, asked for d = {d}")
        hi, lo, _ = theta_hi_lo(plain)
        c, s = cos_sin(np.asarray(positions, dtype=np.float64)[:, None], hi, lo)
        return sinusoidal_layout(s, c, expect.convention).astype(expect.dtype)

    return pe


make.expected_failures = {
    "additive.cross-term-leakage": "a documented non-invariant of every additive encoding: (x_m + P_m) W_Q . "
                                   "(x_n + P_n) W_K has cross terms in the absolute positions",
}
