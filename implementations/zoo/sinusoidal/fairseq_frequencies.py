"""Sinusoidal encoding with fairseq's frequencies, theta_k = exp(-k ln(1e4) / (d/2 - 1)), where base^(-2i/d) is expected."""

import numpy as np

from ropespec.implementations.zoo._encodings import pe

TARGETS = ("sinusoidal.conformance",)
DIAGNOSIS = "base"
SOURCE = "fairseq/modules/sinusoidal_positional_embedding.py, get_embedding: exp(-k ln b / (d/2 - 1))"
FAMILY = "sinusoidal"


def make(expect):
    def thetas(d):
        h = d // 2
        return np.exp(-np.arange(h) * np.log(expect.rope_theta) / max(h - 1, 1))

    return pe(expect, thetas=thetas)
