"""Sinusoidal encoding with cos where the layout puts sin (and sin where cos belongs)."""

from implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.conformance",)
DIAGNOSIS = "convention"
SOURCE = "tensor2tensor's [sin | cos] vs other codebases' [cos | sin] and interleaved layouts (REFERENCE.md section 1)"
FAMILY = "sinusoidal"


def make(expect):
    return pe(expect, swap=True)
