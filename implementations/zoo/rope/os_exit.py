"""Ends its process with os._exit(0) (no exception, no cleanup), as forked helpers and some launchers do."""

import os

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "crash"
SOURCE = "os._exit in a forked helper's error path"


def _exit(x, out, positions):
    os._exit(0)


def make(expect):
    return build(expect, post=_exit)
