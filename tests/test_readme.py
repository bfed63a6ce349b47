"""Every command README shows is run, in a scratch directory with README's my_rope.py, and ends with
the exit code README gives it (a trailing '# ... exit N', else 0). The few that cannot run inside the
test suite say why here."""

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

#: commands run elsewhere, and why
NOT_HERE = {
    "pip install": "installation: .ci/run runs exactly these lines on a clean machine",
    "pytest": "the test suite itself: .ci/run runs it",
    "pytest properties --rope-profile thorough": "the thorough profile runs for tens of minutes (issue 16 measures it)",
}


def readme_commands() -> list[tuple[str, int]]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            command, _, comment = line.partition("  #")
            m = re.search(r"\bexit (\d+)\b", comment)
            out.append((command.strip(), int(m[1]) if m else 0))
    # commands quoted inline: `ropespec check ...`
    for command in re.findall(r"`(ropespec (?:check|precision|fingerprint|golden|spec|proofs)[^`]*)`", README):
        placeholders = [w for w in command.split() if re.fullmatch(r"[A-Z]+", w)]  # --seed S, -j N, TARGET
        if not placeholders and "..." not in command and len(command.split()) > 2:
            out.append((command, 0))
    return list(dict.fromkeys(out))


def _why_not(command: str) -> str | None:
    for prefix, why in NOT_HERE.items():
        if command == prefix or (command.startswith(prefix + " ") and prefix != "pytest"):
            return why
    return None


COMMANDS = readme_commands()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A directory with README's my_rope.py, a docs/ folder, and the repository's examples and
    implementations (README's commands name them by path)."""
    d = tmp_path_factory.mktemp("readme")
    code = re.search(r"```python\n(# my_rope\.py.*?)```", README, re.S)[1]
    (d / "my_rope.py").write_text(code)
    (d / "docs").mkdir()
    for name in ("examples", "implementations", "properties", "conftest.py", "pyproject.toml"):
        (d / name).symlink_to(ROOT / name)
    return d


def test_readme_commands_were_found():
    assert len(COMMANDS) >= 15 and any(exit_ == 1 for _, exit_ in COMMANDS)


@pytest.mark.parametrize("command, exit_code", COMMANDS, ids=[c[:60] for c, _ in COMMANDS])
def test_readme_command(command, exit_code, scratch):
    why = _why_not(command)
    if why:
        pytest.skip(why)
    if "--array torch" in command or "adapters.hf" in command:
        pytest.importorskip("torch")
    if "adapters.hf" in command:
        pytest.importorskip("transformers")
    if "--plot" in command:
        pytest.importorskip("matplotlib")
    argv = shlex.split(command)
    if argv[0] == "ropespec":
        argv = [sys.executable, "-m", "ropespec", *argv[1:]]
    elif argv[0] == "pytest":
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=scratch, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(scratch)})
    assert proc.returncode == exit_code, (f"README says exit {exit_code}, got {proc.returncode} after "
                                          f"{time.monotonic() - t0:.0f} s:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
