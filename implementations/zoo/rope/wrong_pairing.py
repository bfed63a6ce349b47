"""Pairs dims with the other convention: interleaved where half is expected and vice versa."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.locality", "rope.conformance")
DIAGNOSIS = "convention"
SOURCE = "nanotron PR #427 (q/k permutation skipped on conversion); vLLM #49290 (kernel hard-codes neox convention)"


def make(expect):
    return build(expect, convention="interleaved" if expect.convention == "half" else "half")
