"""ropespec check as a person sees it: in a real pseudo-terminal (tmux), at 80, 120 and 200 columns.
Skipped, with the reason, where tmux is absent (.ci/run installs it)."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="no tmux on PATH (Debian: apt-get install tmux)")
INVARIANTS = ("rope.conformance", "rope.identity-at-zero", "rope.norm-per-pair", "scaling.bounded")
TARGET = "implementations.zoo.off_by_one:make"
#: a shell started under pytest exports COLUMNS=80 and LINES=24 (measured here), which rich would take over the
#: pane's real size: unset, as in a terminal a person opens, so that the width is the pane's
UNSET = "unset COLUMNS LINES; "


def _run_in_tmux(width: int, socket: str, env: dict | None = None, name: str | None = None) -> str:
    cmd = [sys.executable, "-m", "ropespec", "check", TARGET, "--expect", "llama2-7b", "--seed", "1"]
    for inv in INVARIANTS:
        cmd += ["--invariant", inv]
    name = name or f"w{width}"
    done = f"ROPESPEC-DONE-{name}"
    shell = UNSET + " ".join(shlex.quote(c) for c in cmd) + f"; echo {done}=$?"
    envs = " ".join(f"-e {k}={v}" for k, v in (env or {}).items())
    subprocess.run(f"{TMUX} -L {socket} new-session -d -s {name} -x {width} -y 200 {envs} "
                   f"{shlex.quote('cd ' + shlex.quote(os.getcwd()) + ' && ' + shell + '; sleep 60')}",
                   shell=True, check=True)
    return done


def _capture(name: str, socket: str) -> str:
    return subprocess.run([TMUX, "-L", socket, "capture-pane", "-p", "-J", "-t", name, "-S", "-500"],
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    socket = f"ropespec-{uuid.uuid4().hex[:8]}"
    sessions = {"w80": (80, None), "w120": (120, None), "w200": (200, None), "nocolor": (120, {"NO_COLOR": "1"})}
    try:
        dones = {n: _run_in_tmux(w, socket, env, n) for n, (w, env) in sessions.items()}
        out, deadline = {}, time.monotonic() + 240
        while len(out) < len(sessions) and time.monotonic() < deadline:
            time.sleep(1)
            for n in sessions:
                text = _capture(n, socket)
                if n not in out and re.search(rf"{dones[n]}=\d", text):
                    out[n] = text
        assert len(out) == len(sessions), {n: _capture(n, socket)[-2000:] for n in sessions if n not in out}
        return out
    finally:
        subprocess.run([TMUX, "-L", socket, "kill-server"], capture_output=True)


@pytest.mark.parametrize("width", [80, 120, 200])
def test_every_row_shows_invariant_status_word_and_ratio(screens, width):
    """The table's rows, as the terminal shows them: invariant id, status, the diagnosis word for a
    failure and the worst ratio, each row on one line at every width; no '[...]' eaten as markup."""
    screen = screens[f"w{width}"]
    assert re.search(rf"ROPESPEC-DONE-w{width}=1", screen), screen[-1500:]
    rows = {}
    for line in screen.splitlines():
        m = re.match(r"\s*A\s+(\S+)\s+(pass|fail|skip|error|xfail)\b(.*)$", line)
        if m:
            rows[m[1]] = (m[2], m[3].split())
    assert set(INVARIANTS) <= set(rows), (width, rows, screen[:3000])
    for inv in ("rope.conformance", "rope.identity-at-zero"):
        status, rest = rows[inv]
        assert status == "fail" and rest[0] == "position-offset" and float(rest[1]) > 1, (inv, rest)
    assert rows["rope.norm-per-pair"][0] == "pass" and float(rows["rope.norm-per-pair"][1][0]) < 1
    assert rows["scaling.bounded"][0] == "skip"
    assert "A = implementations.zoo.off_by_one:make" in screen
    assert "[position-offset]" in screen  # the failures below keep their brackets: text, not markup
    assert "scaling.bounded: skip: the expectation's rope_type is 'default'" in screen  # the note the table has no room for


def test_no_color_gets_plain_lines(screens):
    """NO_COLOR (and a pipe) get one plain line per check: the full names, no table rules."""
    screen = screens["nocolor"]
    assert "─" not in screen and "A = " not in screen
    assert re.search(r"^implementations\.zoo\.off_by_one:make\s+rope\.identity-at-zero\s+fail", screen, re.M), screen[:2000]


def test_a_long_property_shows_how_far_it_has_got():
    """While a long property runs, the progress bar names it and says how far it is, even at 80 columns: the
    decode's example and length (it would otherwise sit for many seconds on the last finished check's name)."""
    socket, name = f"ropespec-{uuid.uuid4().hex[:8]}", "progress"
    expect = ('{"head_dim": 128, "dtype": "float32", "max_position": 1280, "rope_scaling": {"rope_type": "dynamic", '
              '"factor": 2.0, "original_max_position_embeddings": 640}}')
    cmd = [sys.executable, "-m", "ropespec", "check", "implementations.numpy_decode:make", "--invariant",
           "decode.consistency", "--expect", expect, "--seed", "1"]
    shell = UNSET + " ".join(shlex.quote(c) for c in cmd) + "; echo ROPESPEC-DONE=$?"
    subprocess.run(f"{TMUX} -L {socket} new-session -d -s {name} -x 80 -y 50 "
                   f"{shlex.quote('cd ' + shlex.quote(os.getcwd()) + ' && ' + shell + '; sleep 60')}",
                   shell=True, check=True)
    seen, screen = set(), ""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "ROPESPEC-DONE=" not in screen:
            screen = _capture(name, socket)
            seen.update(re.findall(r"decode\.consistency: example \d+, length \d+ of \d+", screen))
            time.sleep(0.2)
    finally:
        subprocess.run([TMUX, "-L", socket, "kill-server"], capture_output=True)
    assert "ROPESPEC-DONE=0" in screen, screen[-1500:]
    lengths = {int(m) for m in re.findall(r"length (\d+) of 1280", " ".join(seen))}
    assert len(lengths) >= 2, (seen, screen[-1500:])  # it moved while we watched


def test_the_panes_are_as_wide_as_asked(screens):
    """Text is laid out for the pane's width, not for a stale COLUMNS: the skip note (96 characters) is
    word-wrapped by ropespec at 80 columns and kept on one line at 120 and 200."""
    note = "A scaling.bounded: skip: the expectation's rope_type is 'default', not linear or ntk or yarn or llama3 or dynamic"
    whole = {w: note in screens[f"w{w}"] for w in (80, 120, 200)}
    assert whole == {80: False, 120: True, 200: True}, whole
