"""The oracle of a rotation by a given table: x rotated by the cos and sin handed to a kernel, formed in
double-double, so that the reference adds nothing to a kernel's bound (K_ROT u of the output dtype)."""

from __future__ import annotations

import numpy as np

from ropespec.spec.angles import two_prod, two_sum
from ropespec.spec.expectation import Expect


def rotated(e: Expect, x: np.ndarray, c: np.ndarray, s: np.ndarray, *, pairs=None, sign: float = 1.0) -> np.ndarray:
    """The rotation of x by the given table, exact to 2^-100 of the pair norm: (x_a c - x_b s, x_a s + x_b c) written
    where ``pairs`` say (a, b, out_a, out_b; default the expectation's own), pass-through dims copied; ``sign`` -1
    turns the other way (the model of a kernel with sin negated)."""
    a, b, oa, ob = pairs or e.pair_index()
    xa, xb = x[:, a], x[:, b]
    out = x.copy()
    for dst, (u, v, w, z) in ((oa, (xa, c, xb, -sign * s)), (ob, (xa, sign * s, xb, c))):
        p1, e1 = two_prod(u, v)
        p2, e2 = two_prod(w, z)
        hi, lo = two_sum(p1, p2)
        out[:, dst] = hi + (lo + e1 + e2)
    return out
