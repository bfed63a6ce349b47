"""What the suite's own tests share: ropespec's command line, run in the test's process or as a process of its own, and
a toy RoPE to check with it.

Fixtures (a test names them as arguments; a conftest is not imported by name):

* ``cli(*args, cwd=None)``: ``ropespec`` run in this test's process (``ropespec.cli.main``) from ``cwd``, as a
  ``subprocess.CompletedProcess`` (returncode, stdout, stderr; or unpacked, ``code, out, err``): the same code as the
  console script without another interpreter's start and imports; TARGETs still run in worker processes.
* ``ropespec_process(*args, cwd=None, timeout=..., **popen)``: ``python -m ropespec`` as a process of its own, for what
  only a process shows (the console script's exit status, signals, closed streams, what is left running).
* ``toy_rope``: a folder holding ``toy_rope.py`` (:data:`TOY_ROPE`), a correct plain numpy RoPE of the half
  convention at two bases (``toy_rope.py:apply``: 10000; ``toy_rope.py:llama``: 500000).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

#: a plain numpy RoPE as a user writes it: the half convention, float64 angles, the result in x's dtype
TOY_ROPE = '''
import numpy as np


def _rope(x, positions, base):
    d = x.shape[1]
    inv = base ** (-np.arange(0, d, 2) / d)
    ang = np.asarray(positions)[:, None].astype(np.float64) * inv
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : d // 2].astype(np.float64), x[:, d // 2 :].astype(np.float64)
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)


def apply(x, positions):
    return _rope(x, positions, 10000.0)


def llama(x, positions):
    return _rope(x, positions, 500000.0)
'''

class Ran(subprocess.CompletedProcess):
    """A run's outcome, also unpacked as ``code, out, err``."""

    def __iter__(self):
        return iter((self.returncode, self.stdout, self.stderr))


#: a run that outlasts this is stuck, not slow: generous, since a loaded 2-core machine takes many times the usual
PROCESS_TIMEOUT = 1800


@pytest.fixture
def cli(capsys, monkeypatch):
    from ropespec.cli import main

    def run(*args, cwd=None) -> Ran:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse's own exits (a usage error, --help)
            code = e.code if isinstance(e.code, int) else 1
        out = capsys.readouterr()
        return Ran(["ropespec", *map(str, args)], code, out.out, out.err)

    return run


@pytest.fixture
def ropespec_process():
    def run(*args, cwd=None, timeout=PROCESS_TIMEOUT, **popen) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ropespec", *map(str, args)], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, **popen)

    return run


@pytest.fixture
def toy_rope(tmp_path):
    (tmp_path / "toy_rope.py").write_text(TOY_ROPE)
    return tmp_path
