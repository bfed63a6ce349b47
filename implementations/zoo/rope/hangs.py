"""Never returns for positions beyond 1000 (a kernel spinning on a bad index); returns correct RoPE below."""

import time

import numpy as np

from ropespec.implementations.zoo._base import build

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "timeout"
SOURCE = "a kernel spinning on an out-of-range index"
TIMEOUT = 0.5


def _hang(x, out, positions):
    if np.max(positions) > 1000:
        time.sleep(3600)
    return out


def make(expect):
    return build(expect, post=_hang)
