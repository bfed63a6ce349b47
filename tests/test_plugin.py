"""The pytest plugin: --rope-impl / ROPESPEC_IMPL / --rope-expect choose what properties/ checks."""

import os
import re
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
                      "--rope-impl", "ropespec.implementations.zoo.rope.wrong_pairing:make")
    assert proc.returncode == 1, proc.stdout
    assert "ropespec.implementations.zoo.rope.wrong_pairing:make (factory, numpy arrays)" in proc.stdout  # header
    assert "test_locality[ropespec.implementations.zoo.rope.wrong_pairing:make]" in proc.stdout
    assert "f(e_j, p)" in proc.stdout and "counterexample" in proc.stdout
    # the failure in pytest prints the command that replays it, and says where the full values are
    assert "replay: ropespec check ropespec.implementations.zoo.rope.wrong_pairing:make " in proc.stdout
    assert "--invariant rope.locality" in proc.stdout and "--json PATH" in proc.stdout


def test_an_unrelated_project_lists_nothing_under_test(tmp_path):
    """The plugin is installed for every pytest run: a project that collects none of ropespec's
    properties sees no 'under test' list of the shipped implementations."""
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert 1 + 1 == 2\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_other.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout
    assert "under test" not in proc.stdout and "numpy_rope" not in proc.stdout


def test_env_variable_and_expectation():
    proc = pytest_run("properties/test_rotation.py", "-k", "identity",
                      "--rope-expect", '{"head_dim": 16, "convention": "interleaved"}',
                      env={"ROPESPEC_IMPL": "ropespec.implementations.zoo.rope.off_by_one:make"})
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
                      "--rope-impl", "ropespec.implementations.zoo.rope.hangs:make", "--rope-timeout", "0.5")
    assert proc.returncode == 1, proc.stdout
    assert "did not return within 0.5 s (--timeout)" in proc.stdout


def test_a_bad_matrix_list_is_a_usage_error():
    proc = pytest_run("properties/test_rotation.py", "--rope-dtype", "float32,float8")
    assert proc.returncode == 4 and "--rope-dtype: unknown 'float8'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_plugin_imports_nothing_heavy_until_it_is_used():
    """pytest loads the plugin in every run where ropespec is installed: importing it loads no engine, no properties,
    no Hypothesis and no numpy (the package's names load on first use), and a name of the package still works."""
    code = ("import sys, ropespec.pytest_plugin; heavy = {'hypothesis', 'numpy', 'ropespec.api', 'ropespec.engine', "
            "'ropespec.properties', 'sympy'} & set(sys.modules); print(sorted(heavy)); import ropespec; "
            "print(ropespec.check.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.splitlines() == ["[]", "ropespec.api"], (out.stdout, out.stderr)
