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
    assert len(found) == 3, found  # rope.conformance's three properties (drawn rows, long calls, large positions)
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


DECORATED = BUGGY + '''

def _keep_dtype(fn):
    """A decorator that sets __name__ but not __qualname__ (no functools.wraps)."""
    def wrapped(x, positions):
        return fn(x, positions).astype(x.dtype)
    wrapped.__name__ = fn.__name__
    return wrapped


@_keep_dtype
def apply(x, positions):
    return rope_off_by_one(x, positions)
'''


def test_a_decorated_function_is_replayed_by_the_name_it_is_imported_by(tmp_path):
    """Its qualified name is the decorator's (_keep_dtype.<locals>.wrapped): the replay names the module attribute
    that is the same object, and that command reproduces the failure."""
    (tmp_path / "my_rope.py").write_text(DECORATED)
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(f"""
        import my_rope

        def test_my_rope(rope_check):
            rope_check(my_rope.apply, {EXPECT!r}, seed=5, invariants=["rope.identity-at-zero"])
        """))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300).stdout
    found = _failures(out)
    [(first, replay)] = found.values()
    assert replay.startswith("ropespec check my_rope.py:apply "), replay
    assert "<locals>" not in out and "runs in a worker process" in out, out[-1500:]
    again = subprocess.run(["bash", "-c", replay], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and [h.rpartition("[")[2] for h in _failures(again.stdout)] == [
        h.rpartition("[")[2] for h in found], again.stdout


def test_a_closure_is_told_how_to_rerun_in_the_same_process():
    from ropespec import check

    def make_closure():
        import numpy as np

        def f(x, positions):
            return np.asarray(x) * 2.0  # no rotation, and twice the norm

        return f

    f = make_closure()
    result = check(f, {"head_dim": 8}, seed=3, invariants=["rope.norm-per-pair"])
    report = result.report()
    assert "replay: no command can load it (it is defined inside a function); in the same process: ropespec.check(f, " \
        in report and "<locals>" not in report.split("replay:")[1], report
    rerun = report.split("in the same process: ", 1)[1].splitlines()[0]
    import ropespec

    again = eval(rerun, {"ropespec": ropespec, "f": f})  # the printed call, as a user would paste it
    assert [(r.invariant, r.diagnosis) for r in again.failures] == [(r.invariant, r.diagnosis) for r in result.failures]


def _replay_cases():
    """One zoo member per call shape (family, form, layout, array kind, decode mode, kernel with its table)."""
    from ropespec.implementations.zoo import members

    seen, out = set(), []
    for m in members():
        key = (m.shape, m.array, m.expect is None)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


@pytest.mark.parametrize("member", _replay_cases(), ids=lambda m: m.name)
def test_every_kind_of_failure_replays_with_its_word(member, capsys, checked):
    """The replay a failing run prints exits 1 with the same word, whatever the call shape (the failing run is the
    session's: tests/test_zoo.py's of the same member and property, tests/conftest.py's checked.zoo)."""
    import shlex

    from ropespec.properties.framework import all_properties
    from ropespec.replay import replay_command
    from ropespec.cli import main
    from tests.test_zoo import target_property

    if member.array == "torch":
        pytest.importorskip("torch")
    all_properties()
    impl, r = checked.zoo(member, target_property(member.targets[0]))
    command = replay_command(impl, r)
    if r.status != "fail":  # an expected failure prints no replay
        assert command is None
        return
    assert command and command.startswith("ropespec check "), command
    capsys.readouterr()
    code = main(shlex.split(command)[1:])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    assert re.search(rf"fail \[{re.escape(r.diagnosis)}\]", out), (r.diagnosis, out[-2000:])


def test_a_seeded_run_draws_the_same_examples_whatever_modules_are_loaded(tmp_path):
    """Hypothesis draws the constants of every local module loaded in the process now and then; the code under test
    runs in a worker process, so these are ropespec's own modules or whatever else the caller imported, and a seeded
    run would draw other examples after `import ropespec.specdoc` or a user's module (README's seeded output was
    another in the test session than in a shell). ropespec's runs draw no module's constants: the same seed, the same
    examples, whatever is loaded (each run a process of its own, as a user's are)."""
    (tmp_path / "many_constants.py").write_text("CONSTANTS = [" + ", ".join(str(7 * i + 3) for i in range(3000)) + "]\n")
    run = ("{imports}from ropespec import check\n"
           "r = check('ropespec.implementations.numpy_rope:make', expect={{'head_dim': 128, 'rope_theta': 500000}}, "
           "seed=1227376188, invariants=['rope.relative-position', 'rope.composition']).reports[0].results\n"
           "print([(x.worst, x.examples) for x in r])\n")
    said = [subprocess.run([sys.executable, "-c", run.format(imports=imports)], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600).stdout for imports in ("", "import many_constants\nimport ropespec.specdoc\n")]
    assert said[0] and said[0] == said[1], said


def test_a_replay_of_a_drawn_case_prints_the_report_alone(cli, tmp_path):
    """A drawn case's replay (--replay BLOB: Hypothesis' reproduce_failure) printed Hypothesis' own 'Failing test
    case: inner(case={...})', thirty lines of its internals, before ropespec's report: only the report is printed."""
    target = "ropespec.implementations.zoo.rope.index_shift:make"
    first = cli("check", target, "--invariant", "rope.conformance:large_positions", "--seed", "3", cwd=tmp_path)
    replay = next(line.strip()[len("replay: "):] for line in first.stdout.splitlines()
                  if line.strip().startswith("replay: "))
    assert "--replay " in replay, replay  # a drawn case, not a pinned one
    again = cli(*replay.split()[1:], cwd=tmp_path)
    assert again.returncode == 1 and "1 failed" in again.stdout, again.stdout
    assert "Failing test case" not in again.stdout + again.stderr and "inner(" not in again.stdout + again.stderr
