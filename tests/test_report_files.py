"""Report files: never over an input, always this run's, whole, or absent; an interrupted run is never "passed".

Run as a user runs ropespec, from a scratch folder with real files, real signals and real pipes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

GOOD = '''
import numpy as np
import helpers

def apply(x, positions):
    return helpers.rope(x, positions)
'''

HELPERS = '''
import numpy as np

def rope(x, positions):
    d = x.shape[1]
    th = 10000.0 ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(positions[:, None] * th), np.sin(positions[:, None] * th)
    a, b = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(x.dtype)
'''

HANGS = '''
import time

def apply(x, positions):
    time.sleep(3600)
'''


@pytest.fixture
def scratch(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "hangs.py").write_text(HANGS)
    (tmp_path / "exp.json").write_text('{"head_dim": 16}')
    return tmp_path


@pytest.mark.parametrize("args, clash", [
    (["check", "good.py:apply", "--json", "good.py"], "is the source of TARGET good.py:apply"),
    (["check", "good.py:apply", "--junit", "good.py"], "is the source of TARGET good.py:apply"),
    (["check", "good.py:apply", "--json", "helpers.py"], "is a module TARGET good.py:apply imports"),
    (["check", "good.py:apply", "--expect", "exp.json", "--json", "exp.json"], "is the --expect file"),
    (["check", "good.py:apply", "--json", "same.out", "--junit", "same.out"], "is also --json's path"),
    (["precision", "good.py:apply", "--json", "good.py"], "is the source of TARGET"),
    (["fingerprint", "good.py:apply", "--json", "good.py"], "is the source of TARGET"),
    (["spec", "--impl", "good.py:apply", "--out", "good.py"], "is the source of TARGET"),
    (["golden", "--expect", "exp.json", "--positions", "1", "--out", "exp.json"], "is the --expect file"),
], ids=["json-target", "junit-target", "json-sibling", "json-expect", "json-junit", "precision", "fingerprint",
        "spec", "golden"])
def test_an_output_path_that_is_an_input_is_refused_before_anything_runs(cli, scratch, args, clash):
    before = {p.name: p.read_bytes() for p in scratch.iterdir() if p.is_file()}
    proc = cli(*args, cwd=scratch)
    assert proc.returncode == 2 and clash in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert {p.name: p.read_bytes() for p in scratch.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("path, words", [("/sys/r.json", "cannot write in /sys"), ("/proc/r.json", "cannot write in /proc"),
                                         ("", "an empty path"), ("nofolder/r.json", "does not exist")])
def test_an_unwritable_path_is_one_line_before_the_run(cli, scratch, path, words):
    proc = cli("check", "good.py:apply", "--json", path, cwd=scratch)
    assert proc.returncode == 2 and words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_standard_output_takes_the_report_and_the_text_goes_to_stderr(ropespec_process, scratch):
    for name in ("-", "/dev/stdout"):  # a process of its own: /dev/stdout is its file descriptor 1
        proc = ropespec_process("check", "good.py:apply", "--expect", "exp.json", "--json", name, "--seed", "1",
                                "--invariant", "rope.identity-at-zero", cwd=scratch)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["passed"] is True
        assert "1 passed" in proc.stderr


def test_a_full_disk_is_one_line_and_exit_2_with_the_text_report_printed(cli, scratch):
    proc = cli("check", "good.py:apply", "--json", "/dev/full", "--seed", "1",
               "--invariant", "rope.identity-at-zero", cwd=scratch)
    assert proc.returncode == 2 and "No space left on device" in proc.stderr, proc.stderr
    assert "1 passed" in proc.stdout


def test_a_closed_stdout_keeps_the_reports_and_the_verdict(scratch):
    cmd = (f"{sys.executable} -m ropespec check good.py:apply --json bp.json --junit bp.xml --seed 1 | head -1; "
           "echo status ${PIPESTATUS[0]}")
    proc = subprocess.run(["bash", "-c", cmd], cwd=scratch, capture_output=True, text=True, timeout=300)
    assert "status 0" in proc.stdout, proc.stdout + proc.stderr
    assert json.loads((scratch / "bp.json").read_text())["passed"] is True
    assert (scratch / "bp.xml").read_text().startswith("<?xml")


def test_a_report_is_written_readable_like_any_new_file(cli, scratch):
    proc = cli("check", "good.py:apply", "--json", "r.json", "--seed", "1",
               "--invariant", "rope.identity-at-zero", cwd=scratch)
    assert proc.returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert (scratch / "r.json").stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_stale_report_never_outlives_a_run_that_ends_in_exit_2(cli, scratch):
    (scratch / "r.json").write_text('{"passed": true}')
    proc = cli("check", "good.py:apply", "missing.py:apply", "--json", "r.json", "--seed", "1",
               "--invariant", "rope.identity-at-zero", cwd=scratch)
    assert proc.returncode == 2 and "missing.py: no such file" in proc.stderr, proc.stderr
    data = json.loads((scratch / "r.json").read_text())
    assert data["passed"] is False and "missing.py" in data["error"] and len(data["implementations"]) == 1


def _interrupt(scratch, target, sig, after, *extra):
    """Run a check, and send ``sig`` ``after`` seconds once it has started checking (it removes the earlier report
    when it starts: a slow machine's imports are not what is interrupted)."""
    (scratch / "r.json").write_text("{}")
    proc = subprocess.Popen([sys.executable, "-m", "ropespec", "check", target, "--json", "r.json", "--junit", "r.xml",
                             *extra], cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (scratch / "r.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_an_interrupted_run_is_never_passed(scratch):
    code, _, err = _interrupt(scratch, "good.py:apply", signal.SIGINT, 2.0, "--profile", "thorough", "--seed", "1")
    assert code == 130, err
    data = json.loads((scratch / "r.json").read_text())
    assert data["passed"] is False and data["interrupted"] == "interrupted", data
    assert 'interrupted="interrupted"' in (scratch / "r.xml").read_text()


def test_a_terminated_hang_with_nothing_done_is_never_passed(scratch):
    code, _, err = _interrupt(scratch, "hangs.py:apply", signal.SIGTERM, 1.0)
    assert code == 143, err
    data = json.loads((scratch / "r.json").read_text())
    assert data["passed"] is False and data["interrupted"] == "terminated" and data["checks_finished"] == 0, data


def test_a_swallowed_interrupt_still_stops_the_run():
    """A Ctrl-C raised inside a callback whose exceptions Python ignores (Hypothesis's garbage-collection callback)
    was lost, and the run carried on to exit 0: the signal is remembered and the next example stops the run."""
    import signal as sig

    from ropespec.implementations import load_implementation
    from ropespec.properties.framework import all_properties
    from ropespec import signals
    from ropespec.engine import check_implementations
    from ropespec.spec import Expect

    impl = load_implementation("ropespec.implementations.numpy_rope:make", expect=Expect(head_dim=8), isolate=False)
    with signals.handled():
        try:
            signals._on_signal(sig.SIGINT, None)
        except KeyboardInterrupt:
            pass  # swallowed, as Python swallows it in a gc callback
        with pytest.raises(KeyboardInterrupt):
            check_implementations([impl], all_properties()[:2], profile="dev", seed=0)
