"""A worker's memory: capped by the OS (--memory-limit), an overrun said as such, and never retried.

A target that built a 2^24-row table was killed by the kernel's OOM killer; the report said ``crash ... killed by
signal 9 (SIGKILL)`` with no word of memory, and each later property started a worker that did the same, three
times near 20 GB each, until the run was stopped by hand."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

HOG = '''
import numpy as np

def make(expect):
    table = np.ones((1 << 24, 256))  # a 32 GB cos/sin cache, built by the factory
    return lambda x, positions: x
'''

KILLED = '''
import os, signal
import numpy as np

def make(expect):
    table = np.ones(150_000_000 // 8)  # 150 MB, touched
    os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer does
'''

LIMIT = '''
import resource

def apply(x, positions):
    raise ValueError(f"soft limit {resource.getrlimit(resource.RLIMIT_DATA)[0]}")
'''


def _check(tmp_path, source, *args):
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "ropespec", "check", *args, "--seed", "1", "--json", "r.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return proc, time.monotonic() - t0


def _results(tmp_path):
    return json.loads((tmp_path / "r.json").read_text())["implementations"][0]["results"]


def test_an_allocation_beyond_the_limit_fails_once_and_says_so(tmp_path):
    proc, seconds = _check(tmp_path, HOG, "t.py:make", "--memory-limit", "1GB")
    assert proc.returncode == 1, proc.stdout[-2000:]
    results = _results(tmp_path)
    failed = [r for r in results if r["status"] == "fail"]
    assert len(failed) == 1 and failed[0]["diagnosis"] == "crash", failed
    message = failed[0]["message"]
    assert "ran out of memory" in message and "t.py:5" in message and "memory limit of 1 GB" in message, message
    rest = [r for r in results if r["status"] == "skip" and "not run" in r["message"]]
    assert rest and all("ran out of memory" in r["message"] for r in rest), results
    assert seconds < 600, seconds  # generous for a loaded machine: a run that waits on a dead worker never ends


def test_a_worker_killed_near_its_limit_is_said_to_be_out_of_memory_and_not_restarted(tmp_path):
    proc, _ = _check(tmp_path, KILLED, "t.py:make", "--memory-limit", "300MB")
    assert proc.returncode == 1, proc.stdout[-2000:]
    results = _results(tmp_path)
    [failed] = [r for r in results if r["status"] == "fail"]
    message = failed["message"]
    assert "SIGKILL" in message and "peak resident memory was" in message and "likely out of memory" in message, message
    assert all(r["status"] == "skip" for r in results if r is not failed), results


def test_the_default_limit_is_half_the_machines_memory(tmp_path):
    from ropespec.implementations import default_memory_limit

    proc, _ = _check(tmp_path, LIMIT, "t.py:apply", "--invariant", "rope.identity-at-zero")
    assert proc.returncode == 1
    [r] = _results(tmp_path)
    assert f"soft limit {default_memory_limit()}" in r["message"], r["message"]
    proc, _ = _check(tmp_path, LIMIT, "t.py:apply", "--invariant", "rope.identity-at-zero", "--memory-limit", "0")
    [r] = _results(tmp_path)
    import resource

    assert f"soft limit {resource.RLIM_INFINITY}" in r["message"], r["message"]


@pytest.mark.parametrize("value, words", [("lots", "a size such as 1GB"), ("12", "at least 64MB"),
                                          ("-1GB", "a size such as 1GB"), ("1.5XB", "a size such as 1GB")])
def test_a_bad_memory_limit_is_one_line_and_exit_2(tmp_path, value, words):
    proc, _ = _check(tmp_path, LIMIT, "t.py:apply", f"--memory-limit={value}")
    assert proc.returncode == 2 and words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_sizes_read_as_written():
    from ropespec.inputs import parse_memory

    assert parse_memory("--memory-limit", "1GB") == 10**9
    assert parse_memory("--memory-limit", "2GiB") == 2 * 2**30
    assert parse_memory("--memory-limit", "512 MB") == 512 * 10**6
    assert parse_memory("--memory-limit", "none") == 0
    assert parse_memory("--memory-limit", None) is None
