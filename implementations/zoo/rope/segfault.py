"""Dereferences a null pointer (a C extension reading out of bounds): the process dies with SIGSEGV."""

import ctypes

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "crash"
SOURCE = "an out-of-bounds read in a native kernel"


def _crash(x, out, positions):
    ctypes.string_at(0)


def make(expect):
    return build(expect, post=_crash)
