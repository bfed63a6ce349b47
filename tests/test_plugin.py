"""The pytest plugin: --rope-impl / ROPESPEC_IMPL / --rope-expect choose what properties/ checks."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_run(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})},
    )


def test_rope_impl_option_runs_properties_on_a_zoo_member():
    proc = pytest_run("properties/test_structure.py", "-k", "locality",
                      "--rope-impl", "implementations.zoo.wrong_pairing:make")
    assert proc.returncode == 1, proc.stdout
    assert "implementations.zoo.wrong_pairing:make (factory, numpy arrays)" in proc.stdout  # header
    assert "test_locality[implementations.zoo.wrong_pairing:make]" in proc.stdout
    assert "f(e_j, p)" in proc.stdout and "counterexample" in proc.stdout


def test_env_variable_and_expectation():
    proc = pytest_run("properties/test_rotation.py", "-k", "identity",
                      "--rope-expect", '{"head_dim": 16, "convention": "interleaved"}',
                      env={"ROPESPEC_IMPL": "implementations.zoo.off_by_one:make"})
    assert proc.returncode == 1, proc.stdout
    assert "head_dim 16, theta 10000, interleaved, float32" in proc.stdout
    assert "1 failed" in proc.stdout


def test_bad_expectation_is_a_usage_error():
    proc = pytest_run("properties/test_rotation.py", "--rope-expect", '{"head_dim": 3}')
    assert proc.returncode == 4  # pytest's usage-error exit code
    assert "--rope-expect: head_dim: must be even" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_rope_timeout_option_reaches_the_worker():
    proc = pytest_run("properties/test_contract.py", "-k", "shape_finite",
                      "--rope-impl", "implementations.zoo.hangs:make", "--rope-timeout", "0.5")
    assert proc.returncode == 1, proc.stdout
    assert "did not return within 0.5 s (--timeout)" in proc.stdout
