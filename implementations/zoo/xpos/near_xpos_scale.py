"""Returns the queries 1 + 50 u too large (float64's unit roundoff): scores 2 to 5 times over the strict float64 bound."""

from ropespec.implementations.zoo._biases import xpos

TARGETS = ("xpos.conformance",)
DIAGNOSIS = "attention-factor"
FAMILY = "xpos"
EXPECT = {"dtype": "float64", "angle_dtype": "exact", "inv_freq_dtype": "exact", "head_dim": 32,
          "convention": "interleaved"}
NEAR = True
SOURCE = "a scale formed by a chain of pow and exp, each off by an ulp (Sun et al., arXiv 2212.10554)"


def make(expect):
    inner = xpos(expect)

    def apply(q, k, q_positions, k_positions):
        rq, rk = inner(q, k, q_positions, k_positions)
        return rq * (1 + 50 * 2.0**-53), rk

    return apply
