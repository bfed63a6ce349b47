"""Raises a BaseException subclass (not an Exception), as some frameworks' control-flow signals do."""

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "exception"
SOURCE = "framework control-flow exceptions derived from BaseException"


class Stop(BaseException):
    pass


def _raise(x, out, positions):
    raise Stop("stop the world")


def make(expect):
    return build(expect, post=_raise)
