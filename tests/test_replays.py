"""A failure from each entry point (command line, Python API, pytest fixture) prints a replay command
that, run in a fresh shell from the same directory, reproduces exactly that failure and nothing else."""

import json
import re
import subprocess
import sys
import textwrap

import pytest

BUGGY = '''
import numpy as np


def rope_off_by_one(x, positions):
    """RoPE with every position shifted by one."""
    d = x.shape[-1]
    inv = 10000.0 ** (-np.arange(0, d, 2) / d)
    ang = (np.asarray(positions)[:, None] + 1) * inv[None, :]
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
'''
EXPECT = {"head_dim": 16, "rope_theta": 10000, "dtype": "float64", "max_position": 4096}
INVARIANTS = ["rope.conformance", "rope.norm-per-pair"]  # conformance has two properties; norm holds


def _failures(text: str) -> dict[str, tuple[str, str]]:
    """header ('impl :: invariant (property): fail [word]') -> (first message line, replay command)."""
    out = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(\S+ :: \S+ \(\w+\): fail \[[\w-]+\])$", line.strip())
        if m:
            replay = next(ln.strip()[len("replay: "):] for ln in lines[i + 1:] if ln.strip().startswith("replay: "))
            out[m[1]] = (lines[i + 1].strip(), replay)
    return out


def _entry(kind: str, tmp_path) -> str:
    (tmp_path / "my_rope.py").write_text(BUGGY)
    call = f"my_rope.rope_off_by_one, {EXPECT!r}, seed=5, invariants={INVARIANTS!r}"
    if kind == "cli":
        cmd = [sys.executable, "-m", "ropespec", "check", "my_rope.py:rope_off_by_one", "--expect", json.dumps(EXPECT),
               "--seed", "5"] + [a for inv in INVARIANTS for a in ("--invariant", inv)]
    elif kind == "api":
        (tmp_path / "run.py").write_text(f"import ropespec\nimport my_rope\nprint(ropespec.check({call}).report())\n")
        cmd = [sys.executable, "run.py"]
    else:
        (tmp_path / "test_mine.py").write_text(textwrap.dedent(f"""
            import my_rope

            def test_my_rope(rope_check):
                rope_check({call})
            """))
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300).stdout


@pytest.mark.parametrize("kind", ["cli", "api", "fixture"])
def test_the_replay_reproduces_that_failure_and_nothing_else(kind, tmp_path):
    found = _failures(_entry(kind, tmp_path))
    assert len(found) == 2, found  # rope.conformance's two properties; the norm holds
    header = next(h for h in found if "(large_positions)" in h)
    first, replay = found[header]
    assert replay.startswith("ropespec check my_rope.py:rope_off_by_one "), replay
    assert "--invariant rope.conformance:large_positions" in replay
    again = subprocess.run(["bash", "-c", replay], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1, again.stdout + again.stderr
    replayed = _failures(again.stdout)
    what = lambda h: h.split(" :: ", 1)[1]  # the implementation's label may carry its dtype (-float64)
    assert [what(h) for h in replayed] == [what(header)], again.stdout
    assert next(iter(replayed.values()))[0] == first
    assert "1 failed" in again.stdout and "0 errors" in again.stdout and "Failing test case" not in again.stdout
    assert "full values: rerun with --json PATH" in again.stdout
