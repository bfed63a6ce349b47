"""Aborts (SIGABRT), as a C++ kernel does on a failed assertion or 'terminate called without an active exception'."""

import os

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "crash"
SOURCE = "a torch call interrupted at exit aborts the interpreter"


def _abort(x, out, positions):
    os.abort()


def make(expect):
    return build(expect, post=_abort)
