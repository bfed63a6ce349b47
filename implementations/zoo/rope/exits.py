"""Calls sys.exit(0) inside the function: run in-process, the checker would end with status 0, as if all held."""

import sys

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "crash"
SOURCE = "wrappers that call sys.exit on an unsupported input"


def _exit(x, out, positions):
    sys.exit(0)


def make(expect):
    return build(expect, post=_exit)
