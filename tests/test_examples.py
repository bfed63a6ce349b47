"""The examples run, the plugin works in a scratch project of its own, and xdist runs the properties."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd=ROOT, timeout=600):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_check_numpy_example():
    proc = run("examples/check_numpy.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ", 0 failed" in proc.stdout


def test_plugin_example_with_torch():
    pytest.importorskip("torch")
    proc = run("-m", "pytest", "-p", "no:cacheprovider", "-q", "examples/test_rope.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_transformers_example():
    pytest.importorskip("transformers")
    proc = run("examples/check_transformers.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr


SCRATCH = '''
import numpy as np

def good(x, positions):
    d = x.shape[1]
    ang = positions[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    x1, x2, c, s = x[:, : d // 2], x[:, d // 2 :], np.cos(ang), np.sin(ang)
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)

def off_by_one(x, positions):
    return good(x, positions + 1)

def test_good(rope_check):
    rope_check(good, expect="llama2-7b")

def test_off_by_one(rope_check):
    rope_check(off_by_one, expect="llama2-7b")

def test_bfloat16_in_numpy(rope_check):
    rope_check(good, expect="llama2-7b", dtype="bfloat16", allow_skip=True)
'''


def test_plugin_in_a_scratch_project(tmp_path):
    """A user's tests with rope_check: the failure names its fault, with its evidence and replay; pytest's short
    summary shows the failure's first line, the fault word and its invariant; a skip (nothing can be checked,
    allow_skip=True) is reported at the user's test, with the hint in rope_check's own arguments."""
    (tmp_path / "test_rope.py").write_text(textwrap.dedent(SCRATCH))
    proc = run("-m", "pytest", "-p", "no:cacheprovider", "-rfs", "test_rope.py", cwd=tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "1 failed, 1 passed, 1 skipped" in out
    assert "test_off_by_one" in out and "position-offset" in out and "positions are shifted by 1" in out
    assert "replay: ropespec check" in out
    summary = out[out.index("short test summary info"):]
    failed = next(ln for ln in summary.splitlines() if ln.startswith("FAILED"))
    assert "test_off_by_one - Failed: [position-offset] rope." in failed, failed  # the fault, at 80 columns
    skipped = next(ln for ln in summary.splitlines() if ln.startswith("SKIPPED"))
    assert "test_rope.py:" in skipped and "pytest_plugin" not in skipped, skipped
    assert 'use array="torch"' in skipped and "--array" not in skipped, skipped


def test_properties_under_xdist():
    """A configuration matrix (--rope-expect repeated, --rope-dtype a list) under pytest-xdist: one test id per
    combination, named by it, on both workers."""
    pytest.importorskip("xdist")
    proc = run("-m", "pytest", "-p", "no:cacheprovider", "-v", "-n", "2", "properties/test_rotation.py",
               "--rope-impl", "ropespec.implementations.numpy_rope:make", "--rope-expect", "mistral-7b-v0.1", "--rope-expect",
               "gpt-j-6b", "--rope-dtype", "float32,float64")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = {m for m in re.findall(r"test_\w+\[([^\]]+)\]", proc.stdout)}
    assert ids == {"gpt-j-6b-float32-nd", "gpt-j-6b-float64-nd", "mistral-7b-v0.1-float32-nd",
                   "mistral-7b-v0.1-float64-nd"}, proc.stdout[-3000:]
    assert "[gw0]" in proc.stdout and "[gw1]" in proc.stdout, proc.stdout[-3000:]
