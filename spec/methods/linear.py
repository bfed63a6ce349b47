"""Position interpolation: theta_i / s."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.methods import ScalingMethod


class Linear(ScalingMethod):
    name = "linear"
    order = 1
    required = frozenset({"factor"})
    promises = ("scaling.bounded", "scaling.linear-positions", "scaling.attention-factor")
    hf_name = "linear"

    def frequencies(self, expect, theta, table, variant):
        f = mpmath.mpf(expect.rope_scaling["factor"])
        return [scaling.linear(t, f) for t in theta]

    def fit(self, s_first, s_last, original):
        if original is None and s_first > 1 + 1e-9:
            yield {"rope_type": self.name, "factor": float(round(s_first, 6))}

    def mistakes(self, e, seq_len, thetas, th0):
        f = e.rope_scaling["factor"]
        yield "factor multiplied", f"the default table multiplied by the factor {f:g} (not divided)", th0 * f
