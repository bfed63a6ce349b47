"""Llama 3: lambda_i = 2 pi / theta_i; lambda < L/high_freq_factor: unchanged; lambda > L/low_freq_factor:
theta_i / s; in between (bounds inclusive): gamma = (L/lambda - low)/(high - low), theta' = (1 - gamma) theta / s +
gamma theta. low = high (Llama 4's config) leaves no band: a step at lambda = L/low, where gamma is 0/0 in transformers'
code and the unscaled side is taken (gamma's limit at the high edge of any band); no pair of a real ladder lands on
it (Llama 4 Scout's nearest wavelength is 0.4% away)."""

import math

import mpmath
import numpy as np

from ropespec.spec import scaling
from ropespec.spec.schema import ExpectationError
from ropespec.spec.methods import ScalingMethod


def table(th0, s, L, lo, hi, reverse=False):
    """Llama 3's table in numpy from the unscaled one (``lo``, ``hi``: the band's factors; ``reverse``: gamma taken as
    1 - gamma, a mistake real ports made)."""
    wl = 2 * math.pi / th0
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = (L / wl - lo) / (hi - lo) if hi != lo else np.ones_like(wl)  # a step: no band to mix in
    if reverse:
        gamma = 1 - gamma
    return np.where(wl < L / hi, th0, np.where(wl > L / lo, th0 / s, (1 - gamma) * th0 / s + gamma * th0))


class Llama3(ScalingMethod):
    name = "llama3"
    order = 4
    required = frozenset({"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
    mixes = True
    promises = ("scaling.bounded", "scaling.band-edges", "scaling.attention-factor")
    hf_name = "llama3"

    def validate(self, s, rotary_dim, max_position):
        if not s["low_freq_factor"] <= s["high_freq_factor"]:
            raise ExpectationError("rope_scaling.high_freq_factor", f"must be at least low_freq_factor "
                                   f"({s['high_freq_factor']!r} < {s['low_freq_factor']!r})")

    def frequencies(self, expect, theta, table, variant):
        s = expect.rope_scaling
        f, L = mpmath.mpf(s["factor"]), mpmath.mpf(s["original_max_position_embeddings"])
        lo, hi = mpmath.mpf(s["low_freq_factor"]), mpmath.mpf(s["high_freq_factor"])
        out = []
        for t in theta:
            lam = scaling.wavelength(t)
            if lam < L / hi:
                out.append(t)
            elif lam > L / lo:
                out.append(scaling.linear(t, f))
            elif lo == hi:  # the step's own wavelength: the unscaled side
                out.append(t)
            else:
                out.append(scaling.mix(t, 1 - scaling.llama3_gamma(L, lam, lo, hi), f))
        return out

    def mixing_bound(self, expect, m):
        """gamma = (L/lambda - lo)/(hi - lo), with lambda = 2 pi / theta rounded, is off by at most
        u (3 hi + lo + 1)/(hi - lo)."""
        s = expect.rope_scaling
        lo, hi = mpmath.mpf(s["low_freq_factor"]), mpmath.mpf(s["high_freq_factor"])
        return (3 * hi + lo + 1) / (hi - lo)

    def fit(self, s_first, s_last, original):
        if original is not None and s_last > 1 + 1e-9:
            for lo, hi in ((1.0, 4.0), (1.0, 8.0), (2.0, 4.0), (2.0, 8.0), (1.0, 1.0)):  # (1, 1): Llama 4's step
                yield {"rope_type": self.name, "factor": float(round(s_last, 6)), "low_freq_factor": lo,
                       "high_freq_factor": hi, "original_max_position_embeddings": original}

    def examples(self, n_pairs, original):
        return {"llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": original}}

    def draw(self, pick, *, factor, original, n_pairs):
        return {"rope_type": self.name, "factor": factor, "original_max_position_embeddings": original,
                "low_freq_factor": pick("low_freq_factor", (1.0, 2.0)),
                "high_freq_factor": pick("high_freq_factor", (4.0, 8.0))}

    def mistakes(self, e, seq_len, thetas, th0):
        s = e.rope_scaling
        f, L, lo, hi = s["factor"], s["original_max_position_embeddings"], s["low_freq_factor"], s["high_freq_factor"]
        if lo == hi:  # a step has no ramp to reverse and no bands to swap: both mistakes are the table itself
            return
        yield "ramp reversed", ("llama3 with its ramp reversed (gamma taken as 1 - gamma: the band's fast pairs divided "
                                "by s, its slow ones kept)"), table(th0, f, L, lo, hi, reverse=True)
        yield "bands swapped", f"llama3 with low_freq_factor and high_freq_factor swapped ({hi:g} and {lo:g})", \
            table(th0, f, L, hi, lo)
