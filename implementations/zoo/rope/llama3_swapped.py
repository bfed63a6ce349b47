"""Llama 3.1 scaling with low_freq_factor and high_freq_factor swapped in the wavelength edges."""

import math

import numpy as np

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("rope.conformance",)
DIAGNOSIS = "scaling"
SOURCE = "llama3 low/high frequency factors swapped when porting apply_scaling"
EXPECT = {"head_dim": 128, "rope_theta": 500000.0, "max_position": 131072,
          "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 8192}}


def _table(expect, seq_len):
    theta, g = spec_table(expect.replace(rope_scaling=None), seq_len)
    s = expect.rope_scaling
    L, f = s["original_max_position_embeddings"], s["factor"]
    lo, hi = s["high_freq_factor"], s["low_freq_factor"]  # the bug
    wavelen = 2 * math.pi / theta
    gamma = (L / wavelen - lo) / (hi - lo)
    out = np.where(wavelen < L / hi, theta, np.where(wavelen > L / lo, theta / f, (1 - gamma) * theta / f + gamma * theta))
    return out, g


def make(expect):
    return build(expect, table=_table)
