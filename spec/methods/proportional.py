"""Proportional RoPE (p-RoPE; transformers' ``rope_type`` "proportional": Gemma 4's global layers, LFM3, Diffusion
Gemma; Barbero et al.): over the rotary dims (the whole head), pairs as the convention says, theta_i = b^(-2i/r) / s
for the first k = floor(p r / 2) pairs and 0 for the rest, with p = ``partial_rotary_factor`` (default 1) and
s = ``factor`` (default 1). A pair of zero frequency turns by no angle at any position: it passes through, as the
dims beyond a partial rotary's rotary_dim do, but in place among the turning pairs' halves. Unlike partial rotary,
the exponent's denominator is the whole rotary width r, not the 2k dims that turn."""

import mpmath
import numpy as np

from ropespec.spec import scaling
from ropespec.spec.methods import ScalingMethod
from ropespec.spec.schema import RANGES, ExpectationError, _is_number, _short


def turning(p, r: int) -> int:
    """How many pairs turn: transformers' int(partial_rotary_factor * head_dim // 2)."""
    return int(p * r // 2)


class Proportional(ScalingMethod):
    name = "proportional"
    order = 7
    optional = frozenset({"partial_rotary_factor", "factor"})
    promises = ("scaling.attention-factor",)
    hf_name = "proportional"

    def validate(self, s, rotary_dim, max_position):
        p = s.setdefault("partial_rotary_factor", 1.0)  # transformers' default: stated, so a report says it
        if not _is_number(p) or not 0 < p <= 1:
            raise ExpectationError("rope_scaling.partial_rotary_factor",
                                   f"must be {RANGES['partial_rotary_factor']}, got {_short(p)}")
        if turning(p, rotary_dim) < 1:
            raise ExpectationError("rope_scaling.partial_rotary_factor", f"must leave a pair turning: "
                                   f"floor({p!r} x {rotary_dim} / 2) = 0")
        s.setdefault("factor", 1.0)

    mistake_words = {"rotated dims": "rotary-dim", "every pair": "rotary-dim"}

    def still_pairs(self, expect):
        return range(turning(expect.rope_scaling["partial_rotary_factor"], expect.rotary_dim), expect.rotary_dim // 2)

    def frequencies(self, expect, theta, table, variant):
        s = expect.rope_scaling
        k, f = turning(s["partial_rotary_factor"], expect.rotary_dim), mpmath.mpf(s["factor"])
        return [scaling.linear(t, f) if i < k else mpmath.mpf(0) for i, t in enumerate(theta)]

    def fit_still(self, turning_pairs, rotary_dim):
        for digits in (4, 8, 17):  # the shortest factor that turns exactly these pairs
            p = float(f"{2 * turning_pairs / rotary_dim:.{digits}g}")
            if turning(p, rotary_dim) == turning_pairs:
                return {"rope_type": self.name, "partial_rotary_factor": p, "factor": 1.0}
        return None

    def examples(self, n_pairs, original):
        return {"proportional": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}

    def draw(self, pick, *, factor, original, n_pairs):
        return {"rope_type": self.name, "partial_rotary_factor": pick("partial_rotary_factor", (0.25, 0.5, 0.75, 1.0)),
                "factor": 1.0}

    def mistakes(self, e, seq_len, thetas, th0):
        s, r = e.rope_scaling, e.rotary_dim
        k = turning(s["partial_rotary_factor"], r)
        if k < r // 2:
            # the ladder normalised by the 2k dims that turn (b^(-2i/2k)), as partial rotary normalises by rotary_dim
            narrow = thetas(e.replace(rope_scaling=None, head_dim=2 * k, rotary_dim=None, partial_rotary_factor=None,
                                      convention="half"), None) / s["factor"]
            yield "rotated dims", f"the exponent over the {2 * k} dims that turn (b^(-2i/{2 * k})), not over {r}", \
                np.concatenate([narrow, np.zeros(r // 2 - k)])
            yield "every pair", "every pair turning (partial_rotary_factor ignored)", th0 / s["factor"]
