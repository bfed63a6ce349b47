"""The sinusoidal encoding's invariants, and the additive encodings' (sinusoidal or learned, added to the input)."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 10

INVARIANTS = [
    Invariant(
        "sinusoidal.conformance",
        "sinusoidal",
        "PE(p) holds sin(p theta_i) and cos(p theta_i), theta_i = base^(-2i/d), in the expected layout "
        "(interleaved as in the paper, or concatenated [sin | cos]), to within the error bound.",
        source="Vaswani et al. 2017 (arXiv 1706.03762); tensor2tensor, fairseq, GPT-J layouts; seed "
               "tutorial 000",
    ),
    Invariant(
        "sinusoidal.norm",
        "sinusoidal",
        "||PE(p)||^2 = d/2 at every position.",
        source="seed tutorial 000 (||PE(p)|| = 4.00 at d = 32)",
    ),
    Invariant(
        "sinusoidal.relative-dot",
        "sinusoidal",
        "PE(p) . PE(q) depends only on p - q: PE(p) . PE(q) = PE(p + c) . PE(q + c) for every shift c.",
        source="seed tutorial 000 (mean cos 0.66 at gap 8, the same at any start)",
    ),
    Invariant(
        "sinusoidal.shift-matrix",
        "sinusoidal",
        "PE(p + k) = M_k PE(p) with one matrix M_k for every p (recovered from data and checked on other "
        "positions).",
        source="Vaswani et al. 2017, section 3.5; seed tutorial 000",
    ),
    Invariant(
        "sinusoidal.distinct",
        "sinusoidal",
        "Distinct positions below max_position get distinct encodings.",
        source="seed tutorial 000 (the ladder of wavelengths)",
    ),
    Invariant(
        "sinusoidal.length-independent",
        "sinusoidal",
        "PE(p) does not depend on the length of the sequence it is computed for.",
        source="seed tutorial 000 (slot 3 is 0.43 in 8 tokens, 0.05 in 64: length-normalised index)",
    ),
    Invariant(
        "additive.cross-term-leakage",
        "sinusoidal",
        "With an additive encoding the score (x_m + P_m) W_Q . (x_n + P_n) W_K at a fixed gap changes "
        "with the absolute position (a documented non-invariant: it is expected to fail, and its spread "
        "is reported); RoPE's score does not (rope.relative-position).",
        source="seed tutorial 004's lab (gap 2 at starts 3, 10, 100, 4000)",
        expected_to_fail="a documented non-invariant of every additive encoding: the cross terms x_m W_Q "
                         ". P_n W_K and P_m W_Q . x_n W_K depend on the absolute positions",
    ),
]
