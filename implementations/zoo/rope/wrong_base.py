"""Ignores rope_theta from the config and uses 10000 (or 500000 when 10000 was asked for)."""

from ropespec.implementations.zoo._base import build

TARGETS = ("rope.conformance",)
DIAGNOSIS = "base"
SOURCE = "airllm PR #369 and vLLM PR #9503 (rope_theta not read from the config)"


def make(expect):
    return build(expect, base=5e5 if expect.rope_theta == 1e4 else 1e4)
