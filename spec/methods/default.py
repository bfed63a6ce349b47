"""The unscaled ladder theta_i = b^(-2i/r) (``rope_type`` "default")."""

from ropespec.spec.methods import ScalingMethod


class Default(ScalingMethod):
    name = "default"
    order = 0
    scales = False
    promises = ("scaling.attention-factor",)
    hf_name = "default"

    def fit(self, s_first, s_last, original):
        if original is None:
            yield None
