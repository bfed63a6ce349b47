"""Static NTK-aware scaling (not a transformers type; older commits called it "ntk"): base' = b s^(r/(r-2))."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.methods import ScalingMethod


class NTK(ScalingMethod):
    name = "ntk"
    order = 2
    required = frozenset({"factor"})
    new_base = True
    promises = ("scaling.bounded", "scaling.ntk-endpoints", "scaling.attention-factor")

    def frequencies(self, expect, theta, table, variant):
        return table(scaling.ntk_base(mpmath.mpf(expect.rope_theta), mpmath.mpf(expect.rope_scaling["factor"]),
                                      mpmath.mpf(expect.rotary_dim)))

    def moved_base(self, theta, scaling_dict, rotary_dim):
        return float(scaling.ntk_base(mpmath.mpf(theta), mpmath.mpf(scaling_dict["factor"]), mpmath.mpf(rotary_dim)))

    def mistakes(self, e, seq_len, thetas, th0):
        f = e.rope_scaling["factor"]
        yield "base times factor", f"the default table with base * s = {e.rope_theta * f:g} (not base * s^(r/(r-2)))", \
            thetas(e.replace(rope_scaling=None, rope_theta=e.rope_theta * f), None)
