"""The tutorial's toy encodings (seed 000), shipped to show their documented failures.

Each factory returns ``pe(positions, d)`` and declares, in ``expected_failures``, the invariants it
is known to break and why; the suite reports those as expected failures with their evidence.
"""

from __future__ import annotations

import numpy as np


def integer_index(expect):
    """PE(p) = p in every dim: unbounded (63 times the embedding scale at position 63)."""

    def pe(positions, d):
        return np.repeat(np.asarray(positions, dtype=np.float64)[:, None], d, axis=1)

    return pe


integer_index.expected_failures = {
    "sinusoidal.conformance": "not the sinusoidal encoding",
    "sinusoidal.norm": "unbounded: the value grows with the position",
    "sinusoidal.shift-matrix": "PE(p + k) = PE(p) + k: an offset, not a linear map",
    "sinusoidal.relative-dot": "PE(p) . PE(q) = d p q depends on p and q, not only p - q",
    "additive.cross-term-leakage": "additive: the score's cross terms carry absolute positions",
}


def length_normalised(expect):
    """PE(p) = p / (n - 1) for a sequence of n = max(positions) + 1 tokens: depends on the length."""

    def pe(positions, d):
        p = np.asarray(positions, dtype=np.float64)
        n = max(2.0, float(p.max()) + 1.0) if p.size else 2.0
        return np.repeat((p / (n - 1))[:, None], d, axis=1)

    return pe


length_normalised.expected_failures = {
    "sinusoidal.conformance": "not the sinusoidal encoding",
    "sinusoidal.norm": "the norm depends on the position and the length",
    "sinusoidal.relative-dot": "depends on p and q themselves",
    "sinusoidal.shift-matrix": "an offset that depends on the length, not a linear map",
    "sinusoidal.length-independent": "slot 3 is 0.43 in an 8-token sequence and 0.05 in a 64-token one",
    "sinusoidal.distinct": "in a long sequence neighbours are only 1/(n - 1) apart",
    "additive.cross-term-leakage": "additive",
}


def binary(expect):
    """PE(p) = the bits of p (bit j in dim j, as +-1): bounded but not smooth (01111 -> 10000 flips 5 bits)."""

    def pe(positions, d):
        p = np.asarray(positions, dtype=np.int64)
        bits = (p[:, None] >> np.arange(d)[None, :]) & 1
        return (2.0 * bits - 1.0).astype(np.float64)

    return pe


binary.expected_failures = {
    "sinusoidal.conformance": "not the sinusoidal encoding",
    "sinusoidal.norm": "bits are +-1: ||PE||^2 = d, not d/2",
    "sinusoidal.distinct": "d bits repeat every 2^d positions",
    "sinusoidal.relative-dot": "not smooth: neighbours differ in 1 to 5+ bits depending on p",
    "sinusoidal.shift-matrix": "no linear map takes every PE(p) to PE(p + k)",
    "additive.cross-term-leakage": "additive",
}
