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
#: a user's module wrapping the zoo's off-by-one RoPE, under a name of a typical length: too long for the table at 80
#: columns (a letter stands for it), short enough at 120 (the zoo's own path is 50 characters, which would not be)
TARGET = "llama_rope_offset:make"
MEMBER = "from ropespec.implementations.zoo.rope.off_by_one import make  # noqa: F401\n"
#: a shell started under pytest exports COLUMNS=80 and LINES=24 (measured here), which rich would take over the
#: pane's real size: unset, as in a terminal a person opens, so that the width is the pane's
UNSET = "unset COLUMNS LINES; "


def _run_in_tmux(width: int, socket: str, env: dict | None = None, name: str | None = None, cwd: str = ".") -> str:
    cmd = [sys.executable, "-m", "ropespec", "check", TARGET, "--expect", "llama2-7b", "--seed", "1"]
    for inv in INVARIANTS:
        cmd += ["--invariant", inv]
    name = name or f"w{width}"
    done = f"ROPESPEC-DONE-{name}"
    shell = UNSET + " ".join(shlex.quote(c) for c in cmd) + f"; echo {done}=$?"
    envs = " ".join(f"-e {k}={v}" for k, v in (env or {}).items())
    subprocess.run(f"{TMUX} -L {socket} new-session -d -s {name} -x {width} -y 200 {envs} "
                   f"{shlex.quote('cd ' + shlex.quote(os.path.abspath(cwd)) + ' && ' + shell + '; sleep 60')}",
                   shell=True, check=True)
    return done


def _capture(name: str, socket: str, *flags: str) -> str:
    """The pane's text, lines the terminal folded joined (-J); with "-e" its colour escapes too."""
    return subprocess.run([TMUX, "-L", socket, "capture-pane", "-p", "-J", *flags, "-t", name, "-S", "-500"],
                          capture_output=True, text=True).stdout


def _raw(name: str, socket: str) -> str:
    """The pane's rows as a person sees them: every row as the terminal folded it."""
    return subprocess.run([TMUX, "-L", socket, "capture-pane", "-p", "-t", name, "-S", "-500"],
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    socket = f"ropespec-{uuid.uuid4().hex[:8]}"
    sessions = {"w80": (80, None), "w120": (120, None), "w200": (200, None), "nocolor": (120, {"NO_COLOR": "1"})}
    home = tmp_path_factory.mktemp("user")
    (home / f"{TARGET.partition(':')[0]}.py").write_text(MEMBER)
    try:
        dones = {n: _run_in_tmux(w, socket, env, n, cwd=str(home)) for n, (w, env) in sessions.items()}
        out, deadline = {}, time.monotonic() + 240
        while not all(n in out for n in sessions) and time.monotonic() < deadline:
            time.sleep(1)
            for n in sessions:
                text = _capture(n, socket)
                if n not in out and re.search(rf"{dones[n]}=\d", text):
                    out[n] = text
                    out[n + "-raw"] = _raw(n, socket)
                    out[n + "-escapes"] = _capture(n, socket, "-e")
        assert len(out) == 3 * len(sessions), {n: _capture(n, socket)[-2000:] for n in sessions if n not in out}
        return out
    finally:
        subprocess.run([TMUX, "-L", socket, "kill-server"], capture_output=True)


@pytest.mark.parametrize("width", [80, 120, 200])
def test_every_row_shows_invariant_status_word_and_ratio(screens, width):
    """The table's rows, as the terminal shows them: implementation, invariant id, status, the diagnosis word for a
    failure and the worst ratio, each row on one line at every width; no '[...]' eaten as markup. The full name
    where the table fits it (120, 200 columns), a letter with a one-step legend where it does not (80)."""
    screen = screens[f"w{width}"]
    assert re.search(rf"ROPESPEC-DONE-w{width}=1", screen), screen[-1500:]
    name = "A" if width == 80 else re.escape(TARGET)
    rows = {}
    for line in screen.splitlines():
        m = re.match(rf"\s*{name}\s+(\S+)\s+(pass|fail|skip|error|xfail)\b(.*)$", line)
        if m:
            rows[m[1]] = (m[2], m[3].split())
    assert set(INVARIANTS) <= set(rows), (width, rows, screen[:3000])
    for inv in ("rope.conformance", "rope.identity-at-zero"):
        status, rest = rows[inv]
        assert status == "fail" and rest[0] == "position-offset" and float(rest[1]) > 1, (inv, rest)
    assert rows["rope.norm-per-pair"][0] == "pass" and float(rows["rope.norm-per-pair"][1][0]) < 1
    assert rows["scaling.bounded"][0] == "skip"
    assert (f"A = {TARGET}" in screen) == (width == 80)
    assert "[position-offset]" in screen  # the failures below keep their brackets: text, not markup
    if width == 200:  # room for a note column beside the full names: the skip's reason is in its row
        row = next(ln for ln in screen.splitlines() if re.match(rf"\s*{name}\s+scaling\.bounded\s+skip", ln))
        assert "no length-extension method (rope_type 'default')" in row and "notes:" not in screen, row
    else:  # the note the table has no room for, below it
        note = f"{'A' if width == 80 else TARGET} scaling.bounded: skip: the expectation has no length-extension method"
        assert note in " ".join(screen.split()), screen[-3000:]


def test_no_color_removes_colour_and_nothing_else(screens):
    """NO_COLOR keeps the table and its layout (rich reads NO_COLOR): the same rows as without it, and no colour
    escape on the screen."""
    screen = screens["nocolor"]
    assert "──" in screen and re.search(rf"^\s*{re.escape(TARGET)}\s+rope\.identity-at-zero\s+fail\s+position-offset",
                                        screen, re.M), screen[:2000]
    assert re.search(r"\x1b\[[\d;]*3[1-7]m", screens["w120-escapes"]), "the plain run shows colour"
    assert not re.search(r"\x1b\[[\d;]*3[1-7]m", screens["nocolor-escapes"]), screens["nocolor-escapes"][:1500]


def test_failure_details_wrap_at_words_and_keep_their_indent_at_80_columns(screens):
    """At 80 columns the 'N failing' details wrap at words (no 'an|gles'), each continuation hanging under its
    line; a counterexample's values and the replay command are the lines left for the terminal to fold, so that
    they copy whole."""
    joined, raw = screens["w80"], screens["w80-raw"]  # lines the terminal folded are joined in the first only
    section = joined[joined.index(" failing:"):joined.rindex("\n", 0, joined.index(" passed, "))].splitlines()[1:]
    wide = screens["w200"]
    words = set(wide[wide.index(" failing:"):].split())
    rows = set(raw.splitlines())
    folded = [ln for ln in section if len(ln) > 80]
    prose = [ln for ln in section if ln.strip() and len(ln) <= 80]
    assert folded and all(ln.startswith(("    ", "  replay: ")) for ln in folded), folded  # values, commands
    assert len(prose) >= 10, section
    for line in prose:
        assert line in rows, line  # wrapped by ropespec, not folded by the terminal
        assert line.startswith(("  ", TARGET)), line  # a continuation hangs under its line's start
        for w in line.split():
            assert w in words, (w, line)


def test_a_long_property_shows_how_far_it_has_got():
    """While a long property runs, the progress bar names it and says how far it is, even at 80 columns: the
    decode's example and length (it would otherwise sit for many seconds on the last finished check's name)."""
    socket, name = f"ropespec-{uuid.uuid4().hex[:8]}", "progress"
    expect = ('{"head_dim": 128, "dtype": "float32", "max_position": 1280, "rope_scaling": {"rope_type": "dynamic", '
              '"factor": 2.0, "original_max_position_embeddings": 640}}')
    cmd = [sys.executable, "-m", "ropespec", "check", "ropespec.implementations.numpy_decode:make", "--invariant",
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
    """Text is laid out for the pane's width, not for a stale COLUMNS: the skip note is word-wrapped by ropespec
    below the table at 80 and 120 columns, and at 200 it is in the table's note column."""
    note = (f"{TARGET} scaling.bounded: skip: the expectation has no length-extension method (rope_type 'default'): the "
            f"scaling properties check what one does to the table")
    below = {w: note in " ".join(screens[f"w{w}"].split()) and note not in screens[f"w{w}"] for w in (120,)}
    assert below == {120: True}, below
    assert "notes:" not in screens["w200"] and " note " in screens["w200"]
