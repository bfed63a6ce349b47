"""xPos's invariants."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 70

INVARIANTS = [
    Invariant(
        "xpos.conformance",
        "xpos",
        "Each pair's score between a query at m and a key at n is zeta_i^((m - n) / scale_base) times RoPE's "
        "R(m theta_i) q_i . R(n theta_i) k_i, zeta_i = (2i / d + 0.4) / 1.4, to within the error bound of the "
        "expectation's class (a centre common to both exponents cancels).",
        source="Sun et al., A Length-Extrapolatable Transformer (arXiv 2212.10554), eq. 9; rotary-embedding-torch's "
               "use_xpos",
    ),
    Invariant(
        "xpos.relative-position",
        "xpos",
        "Scores depend on m - n alone: <q'(m), k'(n)> = <q'(m + c), k'(n + c)> for every shift c, as a decoder "
        "calls it step by step.",
        source="Sun et al. (arXiv 2212.10554): the decay is relative",
    ),
    Invariant(
        "xpos.inverse-scale",
        "xpos",
        "Queries and keys are scaled inversely: at equal positions each pair's score is RoPE's, q_i . k_i, whatever "
        "the position.",
        source="Sun et al. (arXiv 2212.10554): queries scaled by zeta^(n / gamma), keys by zeta^(-n / gamma)",
    ),
]
