"""Sinusoidal encoding with cos where the layout puts sin (and sin where cos belongs)."""

from ropespec.implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.conformance",)
DIAGNOSIS = "convention"
SOURCE = ("tensor2tensor's get_timing_signal_1d ([sin | cos]) vs other codebases' [cos | sin] and the "
          "paper's interleaved layout (Vaswani et al. 2017, section 3.5)")
FAMILY = "sinusoidal"


def make(expect):
    return pe(expect, swap=True)
