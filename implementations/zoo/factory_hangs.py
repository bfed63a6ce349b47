"""The factory never returns (it waits forever for a device or a lock)."""

import time

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "timeout"
SOURCE = "a factory waiting on a lock or a device (ropespec issue 11: --timeout did not cover the factory)"
TIMEOUT = 1.0
WARMUP_TIMEOUT = 2.0


def make(expect):
    time.sleep(3600)
