from ropespec.spec.families import Family
from ropespec.spec.params.xpos import XposParams


class Xpos(Family):
    name = "xpos"
    params = XposParams
    means = ("xPos: RoPE with a per-pair decay, xpos(q, k, q_positions, k_positions) -> (q', k'), queries scaled by "
             "zeta_i^(m / scale_base) and keys by its inverse")
    order = 70
    fingerprint = "ropespec.commands.fingerprint:xpos"

    def describe(self, e) -> str:
        return f"xPos over {e.describe()}, scale_base {e.params(self.name).xpos_scale_base:g}"
