"""Raises KeyboardInterrupt itself (no Ctrl-C was pressed): the code under test, not the user, stopped."""

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "exception"
SOURCE = "a signal handler re-raising KeyboardInterrupt"


def _raise(x, out, positions):
    raise KeyboardInterrupt


def make(expect):
    return build(expect, post=_raise)
