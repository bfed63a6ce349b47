"""The code under test runs in its own process: exit codes that do not lie, runs that do not hang.

Each implementation here misbehaves the way real code does (ends the process, segfaults, aborts, hangs
in a call, in its factory or at import, takes long on its first call, returns what is not a real
array, changes the working directory or numpy's error state, floods stdout, leaves a busy thread
behind). They run through the real command line, together with a correct one.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

NASTY = '''
import ctypes, os, sys, threading, time
import numpy as np

def _rope(x, positions):
    d = x.shape[1]
    inv = 10000.0 ** (-np.arange(0, d, 2) / d)
    ang = positions[:, None].astype(np.float64) * inv
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : d // 2].astype(np.float64), x[:, d // 2 :].astype(np.float64)
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)

def good(x, positions): return _rope(x, positions)
def exits0(x, positions): sys.exit(0)
def exits3(x, positions): sys.exit(3)
def os_exit(x, positions): os._exit(0)
def segfault(x, positions): ctypes.string_at(0)
def aborts(x, positions): os.abort()
class Stop(BaseException): pass
def base_exception(x, positions): raise Stop("stop")
def keyboard_interrupt(x, positions): raise KeyboardInterrupt
def hangs(x, positions):
    if positions.max() > 1000:
        time.sleep(3600)
    return _rope(x, positions)
def factory_hangs(expect):
    time.sleep(3600)
def factory_exits(expect):
    sys.exit(0)
_cold = [True]
def slow_first_call(x, positions):
    if _cold[0]:
        time.sleep(1.0)  # a JIT compile: inside the warm-up budget, far beyond --timeout
        _cold[0] = False
    return _rope(x, positions)
def chdir(x, positions):
    os.chdir("/")
    return _rope(x, positions)
def seterr(x, positions):
    np.seterr(all="raise")
    return _rope(x, positions)
def flood(x, positions):
    sys.stdout.write("spam " * 4000 + "\\n")
    return _rope(x, positions)
_spinning = []
def leftover_thread(x, positions):
    if not _spinning:
        _spinning.append(threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True))
        _spinning[0].start()
    return _rope(x, positions)
def complex_out(x, positions): return _rope(x, positions).astype(np.complex64)
def strings_out(x, positions): return _rope(x, positions).astype(str)
'''

#: what each nasty implementation must be called (None: it computes RoPE correctly and must pass)
WORDS = {
    "good": None, "exits0": "crash", "exits3": "crash", "os_exit": "crash", "segfault": "crash", "aborts": "crash",
    "base_exception": "exception", "keyboard_interrupt": "exception", "hangs": "timeout",
    "factory_hangs": "timeout", "factory_exits": "crash", "slow_first_call": None, "chdir": None, "seterr": None, "flood": None,
    "complex_out": "shape", "strings_out": "shape",
}


@pytest.fixture
def nasty(tmp_path):
    (tmp_path / "nasty.py").write_text(NASTY)
    (tmp_path / "hang_import.py").write_text("import time\ntime.sleep(3600)\ndef f(x, positions):\n    return x\n")
    (tmp_path / "exit_import.py").write_text("import sys\nsys.exit(0)\ndef f(x, positions):\n    return x\n")
    return tmp_path


@pytest.mark.slow
def test_nasty_implementations_in_one_run(ropespec_process, nasty):
    targets = [f"nasty.py:{name}" for name in WORDS] + ["nasty.py:leftover_thread", "hang_import.py:f",
                                                        "exit_import.py:f"]
    start = time.monotonic()
    # the invariants at small positions and the one sweep to large ones (where `hangs` hangs): what isolation is
    # about is shown on them; every invariant on correct code is README's `ropespec check`
    invariants = [a for i in ("rope.conformance", "rope.identity-at-zero", "rope.norm-per-pair", "rope.relative-position")
                  for a in ("--invariant", i)]
    proc = ropespec_process("check", *targets, *invariants, "-j", "2", "--force-jobs", "--timeout", "0.5",
                            "--warmup-timeout", "2.5", "--seed", "1", "--json", "r.json", cwd=nasty)
    took = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    data = json.loads((nasty / "r.json").read_text())
    by_name = {i["name"]: i for i in data["implementations"]}
    assert sorted(by_name) == sorted(targets)  # every one was checked and reported
    words = {**{f"nasty.py:{k}": v for k, v in WORDS.items()}, "hang_import.py:f": "timeout", "exit_import.py:f": "crash"}
    for name, word in words.items():
        results = by_name[name]["results"]
        failed = {r["diagnosis"] for r in results if r["status"] == "fail"}
        if word is None:  # correct code passes every invariant, whatever the others did
            assert by_name[name]["passed"] and by_name[name]["checked"], (name, failed)
        else:
            assert failed == {word}, (name, failed)
    # after a call timed out, a fresh worker ran the next property; after MAX_TIMEOUTS timeouts the rest is not run,
    # and says why
    from ropespec.implementations.contract import MAX_TIMEOUTS

    hung = [r for r in by_name["nasty.py:hangs"]["results"] if r["diagnosis"] == "timeout"]
    assert 1 < len(hung) <= MAX_TIMEOUTS, hung
    rest = by_name["nasty.py:hangs"]["results"][by_name["nasty.py:hangs"]["results"].index(hung[-1]) + 1:]
    assert all(r["status"] == "skip" and "not run: calls timed out in" in r["message"] for r in rest) \
        if len(hung) == MAX_TIMEOUTS else all(r["status"] != "skip" for r in rest), rest
    spinning = {r["diagnosis"] for r in by_name["nasty.py:leftover_thread"]["results"] if r["status"] == "fail"}
    assert spinning <= {"timeout"}  # slowed by its own thread at most; never anyone else
    assert by_name["nasty.py:slow_first_call"]["warmup_seconds"] >= 1.0
    assert by_name["nasty.py:flood"]["output"]["cut"] > 0  # head and tail kept, the middle cut and counted
    assert "bytes cut from the middle" in proc.stdout
    assert (nasty / "r.json").exists() and not Path("/r.json").exists()  # chdir did not move the report
    crash = next(r for r in by_name["nasty.py:segfault"]["results"] if r["status"] == "fail")
    assert "killed by signal 11 (SIGSEGV)" in crash["message"] and "segfault at nasty.py" in crash["message"]
    exits = next(r for r in by_name["nasty.py:exits3"]["results"] if r["status"] == "fail")
    assert "called sys.exit(3)" in exits["message"]
    assert took < 1200, took  # generous for a loaded machine: a hang waited out is an hour


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signal_stops_a_parallel_run_and_leaves_no_process(nasty, sig, code, word):
    proc = subprocess.Popen([sys.executable, "-m", "ropespec", "check", "nasty.py:hangs", "nasty.py:good", "-j", "2",
                             "--force-jobs", "--timeout", "60", "--seed", "1"], cwd=nasty, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(_descendants(proc.pid)) < 4 and time.monotonic() < deadline:  # runners and their workers
        time.sleep(0.1)
    time.sleep(1.0)
    family = _descendants(proc.pid)
    assert len(family) >= 4
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 2.0
    assert proc.returncode == code, err
    assert f"ropespec: {word}" in err and re.search(r"holds the (1 check|\d+ checks) that finished", err), err
    assert "ropespec check: profile" in out  # the report of what finished
    # and says in its own last line that it is not the whole run: a report saved to a file carries the mark
    assert out.rstrip().splitlines()[-1].endswith(f"; {word} before the run ended: the report holds the checks "
                                                  f"that finished"), out[-300:]
    time.sleep(1.0)
    assert not [p for p in family if _alive(p)]


def test_check_help_lists_exit_codes_and_examples(ropespec_process):
    proc = ropespec_process("check", "--help")
    assert proc.returncode == 0
    for line in ("exit codes:", "  0    at least one property ran", "  1    an invariant failed",
                 "  2    bad usage", "130  interrupted", "examples:", "ropespec check my_rope.py:apply"):
        assert line in proc.stdout


def test_jobs_are_capped(ropespec_process, nasty):
    proc = ropespec_process("check", "nasty.py:good", "nasty.py:chdir", "-j", "100", "--invariant",
                            "rope.identity-at-zero", "--seed", "1", cwd=nasty)
    assert proc.returncode == 0, proc.stderr
    assert "checked in 2 processes (-j 100 capped" in proc.stdout


@pytest.mark.parametrize("args, why", [
    (["--dtype", "bfloat16"], "numpy has no bfloat16; use --array torch"),
    (["--array", "list", "--dtype", "float32"], "Python lists hold float64 only"),
    (["--device", "cuda"], "--device cuda needs --array torch"),
])
def test_nothing_checked_is_exit_2_with_the_reason(cli, nasty, args, why):
    proc = cli("check", "nasty.py:good", *args, "--seed", "1", cwd=nasty)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and why in proc.stderr and "--allow-skip" in proc.stderr
    allowed = cli("check", "nasty.py:good", *args, "--seed", "1", "--allow-skip", cwd=nasty)
    assert allowed.returncode == 0 and why in allowed.stdout


def test_a_replayed_timeout_is_a_timeout(ropespec_process, tmp_path):
    report = tmp_path / "r.json"
    proc = ropespec_process("check", "ropespec.implementations.zoo.rope.hangs:make", "--timeout", "0.5", "--invariant",
                            "contract.shape-finite", "--seed", "2", "--json", str(report), cwd=ROOT)
    assert proc.returncode == 1
    [result] = json.loads(report.read_text())["implementations"][0]["results"]
    assert result["diagnosis"] == "timeout"
    again = subprocess.run(result["replay"] + f" --timeout 0.5 --json {tmp_path / 'again.json'}", shell=True,
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert again.returncode == 1
    [replayed] = json.loads((tmp_path / "again.json").read_text())["implementations"][0]["results"]
    assert replayed["diagnosis"] == "timeout" and replayed["counterexample"] == result["counterexample"]


def test_reports_are_strict_json_and_valid_xml(ropespec_process, nasty):
    (nasty / "ugly.py").write_text(textwrap.dedent('''
        import numpy as np
        def rope(x, positions):
            if positions.max() > 1000:
                raise ValueError("bad \\x00\\x07\\x1b[31m byte \\ud800")
            return x * np.inf
    '''))
    proc = ropespec_process("check", "ugly.py:rope", "--seed", "1", "--json", "r.json", "--junit", "r.xml", cwd=nasty)
    assert proc.returncode == 1

    def no_constants(name):
        raise AssertionError(f"non-standard JSON token {name}")

    data = json.loads((nasty / "r.json").read_text(), parse_constant=no_constants)
    worst = [r["worst"] for r in data["implementations"][0]["results"] if isinstance(r["worst"], str)]
    assert set(worst) <= {"Infinity", "-Infinity", "NaN"}
    import xml.etree.ElementTree as ET

    failures = ET.parse(nasty / "r.xml").getroot().findall("testsuite/testcase/failure")
    assert failures and any("\\x00" in f.get("message") for f in failures)


def test_no_hypothesis_folder_in_the_working_directory(ropespec_process, nasty):
    proc = ropespec_process("check", "nasty.py:good", "--invariant", "rope.composition", "--seed", "1", cwd=nasty)
    assert proc.returncode == 0
    assert not (nasty / ".hypothesis").exists()


def test_a_target_file_imports_its_siblings(ropespec_process, tmp_path):
    (tmp_path / "helpers.py").write_text(NASTY)
    (tmp_path / "mine.py").write_text("from helpers import good as rope\n")
    proc = ropespec_process("check", "mine.py:rope", "--invariant", "rope.identity-at-zero", "--seed", "1",
                            cwd=tmp_path.parent)
    assert proc.returncode == 2 and "no such file" in proc.stderr  # a relative path is the user's working directory's
    proc = ropespec_process("check", f"{tmp_path}/mine.py:rope", "--invariant", "rope.identity-at-zero", "--seed",
                            "1", cwd=tmp_path.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_twice_after_editing_runs_the_new_code(tmp_path):
    from ropespec import check

    path = tmp_path / "edited.py"
    path.write_text(NASTY.replace("10000.0 **", "500000.0 **"))  # the wrong base
    assert not check(f"{path}:good", invariants=["rope.conformance"], seed=1).passed
    path.write_text(NASTY)
    assert check(f"{path}:good", invariants=["rope.conformance"], seed=1).passed


def test_where_the_implementation_runs_is_said(tmp_path):
    import numpy as np

    from ropespec import check

    result = check(lambda x, positions: np.asarray(x), invariants=["contract.shape-finite"], seed=1)
    assert result.reports[0].impl.isolation.startswith("in-process (a lambda")
    assert "runs in-process (a lambda has no importable name)" in result.report()
    result = check("ropespec.implementations.numpy_rope:make", invariants=["contract.shape-finite"], seed=1)
    assert result.reports[0].impl.isolation == "worker process"
    assert "runs in a worker process, warm-up" in result.report()


def test_fingerprint_and_precision_take_timeouts(ropespec_process, nasty):
    proc = ropespec_process("fingerprint", "nasty.py:hangs", "--timeout", "0.5", cwd=nasty)
    assert proc.returncode == 1 and "[timeout]" in proc.stdout
    proc = ropespec_process("precision", "nasty.py:hangs", "--timeout", "0.5", "--max-position", "100000", cwd=nasty)
    assert proc.returncode == 1 and "[timeout]" in proc.stdout


def test_the_plugin_leaves_other_tests_hypothesis_settings_alone(tmp_path):
    (tmp_path / "test_theirs.py").write_text(textwrap.dedent('''
        import datetime
        from hypothesis import given, settings, strategies as st

        def test_defaults():
            s = settings()
            assert s.max_examples == 100 and s.deadline == datetime.timedelta(milliseconds=200)
    '''))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_theirs.py"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout


def test_a_hung_torch_call_does_not_abort_the_interpreter(ropespec_process, tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "slow_torch.py").write_text(textwrap.dedent('''
        import time
        import torch

        def rope(x, positions):
            y = torch.nn.functional.gelu(x @ torch.ones(x.shape[1], x.shape[1], dtype=x.dtype))  # threads busy
            if int(positions.max()) > 1000:
                time.sleep(3600)
            return x.clone()
    '''))
    proc = ropespec_process("check", "slow_torch.py:rope", "--array", "torch", "--timeout", "0.5", "--invariant",
                    "rope.identity-at-zero", "--invariant", "rope.conformance", "--seed", "1", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # not 134: 'terminate called without an active exception'
    assert "terminate called" not in proc.stderr and "[timeout]" in proc.stdout


def test_the_transformers_adapter_without_transformers_checks_nothing(tmp_path):
    fake = tmp_path / "no_transformers" / "transformers"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('transformers is not installed here')\n")
    env = dict(os.environ, PYTHONPATH=str(fake.parent))
    proc = subprocess.run([sys.executable, "-m", "ropespec", "check", "ropespec.implementations.adapters.hf:make", "--array",
                           "torch", "--seed", "1"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    if "torch is not installed" in proc.stderr:
        pytest.skip("torch is not installed")
    assert proc.returncode == 2  # all 20 skipped was exit 0: nothing checked is never a pass
    assert "nothing can be checked on ropespec.implementations.adapters.hf:make: transformers is not installed" in proc.stderr


@pytest.fixture
def fresh_fork_server():
    """A fork server of this test's own: a test that kills it must not leave the next tests without one."""
    from ropespec.implementations.boundary import processes as isolation

    isolation._SERVER.clear()
    yield
    isolation._SERVER.clear()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server runs on Linux only")
def test_the_fork_server_takes_preloads_beside_numpys_thread_pool(fresh_fork_server):
    """numpy's OpenBLAS starts threads at import; the fork server counted them as its own and refused every
    preload, and the refusal then killed it."""
    from ropespec.implementations.boundary import processes as isolation

    server = isolation.fork_server()
    assert server is not None
    server.preload(["json", "decimal"], 30.0)
    assert isolation.fork_server() is server


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server runs on Linux only")
def test_a_worker_outlives_the_fork_server_it_came_from(tmp_path, fresh_fork_server):
    """A worker forked by the fork server watches ropespec, not the server: when the server goes away (it
    grew a thread, or timed out) the workers it forked go on answering. Before, a plain function that
    imports transformers died with 'ended the worker process: it ended'."""
    from ropespec.implementations.boundary import processes as isolation
    from ropespec.properties.framework import all_properties, PROPERTIES, run_property
    from ropespec.inputs import load_implementations

    all_properties()
    (tmp_path / "plain.py").write_text(NASTY)
    server = isolation.fork_server()
    [impl] = load_implementations([f"{tmp_path / 'plain.py'}:good"], dtype="float64")
    first = run_property(PROPERTIES["identity_at_zero"], impl, profile="dev", seed_value=0)
    assert first.status == "pass", first.message
    server.child.kill()
    time.sleep(1.0)  # the worker's watch looks every 0.2 s
    again = run_property(PROPERTIES["conformance"], impl, profile="dev", seed_value=0)
    assert again.status == "pass", again.message
    assert impl.host.restarts == 0  # the same worker answered


LAZY_FACTORY = '''
def make(expect):
    import mailbox  # noqa: F401  (a library the factory imports when called, as the hf adapter imports transformers)

    def rope(x, positions):
        return x
    return rope
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server runs on Linux only")
def test_libraries_a_factory_imports_when_called_are_preloaded(tmp_path, fresh_fork_server):
    """Only the TARGET's import was reported, so transformers' modeling code (imported inside the hf
    adapter's factories) was imported afresh by every worker: 2 s an implementation instead of 0.03 s."""
    from ropespec.implementations.boundary import processes as isolation
    from ropespec.inputs import load_implementations
    from ropespec.spec import Expect

    (tmp_path / "lazy.py").write_text(LAZY_FACTORY)
    [impl] = load_implementations([f"{tmp_path / 'lazy.py'}:make"], expect=Expect(head_dim=8), dtype="float64")
    impl.bind(Expect(head_dim=8, dtype="float64"))
    server = isolation.fork_server()
    assert server is not None and "mailbox" in server.preloaded


def test_sigterm_stays_sigterm_when_a_library_turns_it_into_a_keyboard_interrupt():
    """A blocking call of a library (Ray's ray.wait) runs ropespec's handler inside itself and raises a plain
    KeyboardInterrupt instead of the Terminated it raised: the signal remembered still says SIGTERM (exit 143)."""
    import signal as signal_module

    from ropespec import signals

    with signals.handled():
        try:
            try:
                os.kill(os.getpid(), signal_module.SIGTERM)
                time.sleep(5)
            except KeyboardInterrupt:
                raise KeyboardInterrupt from None  # what the library raises
        except KeyboardInterrupt as e:
            assert type(e) is KeyboardInterrupt and signals.terminated(e)
    with signals.handled():
        assert not signals.terminated(KeyboardInterrupt())  # a Ctrl-C is a Ctrl-C


DROPPED = '''
import gc, os, sys, time
from ropespec.properties.framework import all_properties, PROPERTIES, run_property
from ropespec.inputs import load_implementations

all_properties()
# Hypothesis keeps the first strategy a process builds (hypothesis.configuration), and with it that one implementation
[first] = load_implementations(["ropespec.implementations.numpy_rope:make"], dtype="float32")
run_property(PROPERTIES["identity_at_zero"], first, profile="dev", seed_value=0)
pids = []
for seed in range(5):  # as a test suite does: an implementation made, checked, and dropped without close()
    [impl] = load_implementations(["ropespec.implementations.numpy_rope:make"], dtype="float32")
    run_property(PROPERTIES["identity_at_zero"], impl, profile="dev", seed_value=seed)
    pids.append(impl.host.child.pid)
    del impl
gc.collect()


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


deadline = time.monotonic() + 10
while any(alive(p) for p in pids) and time.monotonic() < deadline:
    time.sleep(0.05)
print(len(set(pids)), sum(alive(p) for p in pids))
'''


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_dropped_implementations_worker_does_not_idle_on():
    """An implementation dropped without close() (as a test suite drops them) stops its worker process: none of five
    is left running, where each sat idle under the fork server until the run ended."""
    proc = subprocess.run([sys.executable, "-c", DROPPED], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    started, left = map(int, proc.stdout.split()[-2:])
    assert (started, left) == (5, 0), proc.stdout


def _marked(marker: str) -> list[tuple[int, str]]:
    """Every process whose environment carries ``marker`` (what a run started, wherever it was re-parented to)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_run_of_several_implementations_holds_one_worker_at_a_time_and_leaves_nothing():
    """ropespec's processes counted while a run of four implementations goes on and after it ends: the command, its
    fork server and the one worker of the implementation being checked (each worker is stopped when its
    implementation is done, none sits idle), and afterwards nothing, re-parented or not."""
    import uuid

    marker = f"ROPESPEC_COUNT_{uuid.uuid4().hex}"
    targets = ["ropespec.implementations.numpy_rope:make", "ropespec.implementations.zoo.rope.wrong_base:make",
               "ropespec.implementations.numpy_layout:thd", "ropespec.implementations.zoo.rope.off_by_one:make"]
    proc = subprocess.Popen([sys.executable, "-m", "ropespec", "check", *targets, "--seed", "1", "--invariant",
                             "rope.conformance", "--invariant", "rope.composition"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, marker: "1"})
    most = 0
    while proc.poll() is None:
        most = max(most, len(_marked(marker)))
        time.sleep(0.05)
    out, err = proc.communicate()
    assert proc.returncode == 1, err[-2000:]  # two of the four are zoo members
    assert 2 <= most <= 3, most  # the command and its fork server, and at most one worker besides
    deadline = time.monotonic() + 10
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(marker) == [], _marked(marker)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server runs on Linux only")
def test_a_worker_dropped_while_the_fork_server_answers_does_not_hang_the_run(fresh_fork_server):
    """A dropped host's worker is killed by a finalizer, which the garbage collector runs wherever it runs: once it
    ran inside the fork server's own exchange (polling for a fork's answer) and waited for the server's lock that
    exchange held, and a whole pytest run sat idle. The kill must not wait on the server from inside its exchange;
    the server reaps the worker after its next message."""
    from ropespec.implementations.boundary import processes as isolation

    server = isolation.fork_server()
    victim = isolation.Child("ropespec.implementations.boundary.worker", fork=True)
    receive = server.child.receive

    def receive_and_collect(budget):  # the finalizer, run mid-exchange as the collector ran it
        victim.kill()
        return receive(budget)

    server.child.receive = receive_and_collect
    done: list = []
    t = threading.Thread(target=lambda: done.append(isolation.Child("ropespec.implementations.boundary.worker",
                                                                    fork=True)), daemon=True)
    t.start()
    t.join(30)
    server.child.receive = receive
    assert done, "forking a worker hung: the finalizer waited on the fork server inside its own exchange"
    done[0].kill()
    assert victim.returncode is None or victim.returncode < 0
    server.collect()  # the server has reaped the killed worker by now: nothing of it is left running
    assert victim.pid not in {pid for pid, _ in isolation.descendants(server.child.pid)}
