"""The ladders theta_i real code forms in a dtype, emulated exactly (round_to after every float64 operation is that
dtype's arithmetic): the error model's tightness tests measure the worst of them against the class's bound
(ropespec.spec.tolerance.ladder_formation_errors)."""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.spec import tolerance
from ropespec.spec.dtypes import round_to


def pow_ladder(e, dtype: str) -> np.ndarray:
    """theta_i = 1 / base ** (2i / r), every step rounded to ``dtype`` (transformers' recipe)."""
    rd = lambda v: round_to(v, dtype)  # noqa: E731
    expo = rd(rd(np.arange(0, e.rotary_dim, 2, dtype=np.float64)) / e.rotary_dim)
    return rd(1.0 / rd(rd(e.rope_theta) ** expo))


def recurrence_ladder(e, dtype: str) -> np.ndarray:
    """theta_i = theta_(i-1) s in ``dtype`` (ggml's theta *= theta_scale), its step s = base^(-2/r) one ulp above the
    exact step (what a pow good to one ulp may give: the worst a legal step is, every product carrying it)."""
    rd = lambda v: round_to(v, dtype)  # noqa: E731
    exact = float(e.rope_theta) ** (-2.0 / e.rotary_dim)
    step = float(np.nextafter(np.array(rd(exact), dtype=dtype), np.array(np.inf, dtype=dtype)))
    out, theta = [], 1.0
    for _ in range(e.rotary_dim // 2):
        out.append(theta)
        theta = rd(theta * step)
    return np.array(out)


def worst_ladder(e, dtype: str) -> np.ndarray:
    """The table of ``e`` (its scaling too) formed in ``dtype`` the worst legal way the class allows: by a recurrence
    where the class admits one (tolerance.FORMED_EVERY_WAY), by pow otherwise; each pair's relative error from the
    base ladder carried onto the exact table, which is then rounded to ``dtype``."""
    base = e.replace(rope_scaling=None)
    formed = recurrence_ladder(base, dtype) if dtype in tolerance.FORMED_EVERY_WAY else pow_ladder(base, dtype)
    exact = reference.thetas(base)
    return round_to(reference.thetas(e) * (formed / exact), dtype)
