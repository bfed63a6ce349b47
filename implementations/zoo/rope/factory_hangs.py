"""The factory never returns (it waits forever for a device or a lock)."""

import time

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "timeout"
SOURCE = "a factory waiting on a lock or a device"
TIMEOUT = 0.5
WARMUP_TIMEOUT = 0.5  # it never returns: any budget ends in a timeout


def make(expect):
    time.sleep(3600)
