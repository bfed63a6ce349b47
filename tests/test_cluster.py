"""ropespec check --cluster: a configuration matrix as tasks on a real local Ray cluster (2 CPUs on loopback, started
and stopped by the run). The verdicts are the -j runners' for a correct, a buggy and a crashing TARGET; a task whose
Ray worker is killed mid-check runs once more and says so, and the report is whole; Ctrl-C cancels the tasks; nothing
of the cluster is left running afterwards; an address nothing answers on is one line, exit 2."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ropespec.cli import main
from test_isolation import _alive  # the process-table reading the isolation tests use

# found, not imported: Ray's runtime stays out of the suite's own processes (every check here starts ropespec)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray (the cluster extra)")

TARGETS = '''
import os
import signal
import time

from ropespec.implementations import numpy_rope


def crash(x, positions):
    os._exit(3)


def _ray_worker():
    """The Ray worker this code runs below (the ancestor whose parent is the raylet), or None."""
    raylet, pid = int(os.environ.get("RAY_RAYLET_PID", "0")), os.getpid()
    while pid > 1:
        with open(f"/proc/{pid}/stat") as f:
            parent = int(f.read().rpartition(")")[2].split()[1])
        if parent == raylet:
            return pid
        pid = parent
    return None


CALLS = [0]


def killed_once(expect):
    """numpy's RoPE; the first time any of its checks makes its 50th call (inside the second property), it kills the
    Ray worker it runs in."""
    f = numpy_rope.make(expect)

    def apply(x, positions):
        CALLS[0] += 1
        worker = _ray_worker()
        if CALLS[0] == 50 and worker and not os.path.exists(MARK):
            with open(MARK, "w") as out:
                out.write(f"{worker} {os.getpid()}")
            os.kill(worker, signal.SIGKILL)
        return f(x, positions)
    return apply


def slow(expect):
    f = numpy_rope.make(expect)

    def apply(x, positions):
        with open(STARTED, "a") as out:
            out.write(f"{os.getpid()}\\n")
        time.sleep(0.2)
        return f(x, positions)
    return apply
'''

MATRIX = ["--expect", "llama3.1-8b", "--expect", "mistral-7b-v0.1", "--profile", "ci", "--seed", "3",
          "--invariant", "rope.conformance"]


def _targets(tmp_path: Path) -> Path:
    path = tmp_path / "cluster_targets.py"
    path.write_text(TARGETS.replace("MARK", repr(str(tmp_path / "killed"))).replace("STARTED", repr(str(tmp_path / "started"))))
    return path


class _NoGpu:
    class ray:
        @staticmethod
        def cluster_resources():
            return {"CPU": 2.0}


def test_a_cuda_check_on_a_cluster_without_a_gpu_is_bad_usage_not_a_wait():
    """A task asking for a GPU that no node has would wait for ever: said before any task is submitted."""
    from ropespec.cluster import check_on_cluster
    from ropespec.request import CheckRequest
    from ropespec.implementations import LoadRequest
    from ropespec.inputs import UsageError

    with pytest.raises(UsageError, match="the Ray cluster has no GPU"):
        check_on_cluster(_NoGpu(), [LoadRequest("k.py:f", name="k", device="cuda")],
                         CheckRequest(profile="ci", seed=1))


def _ray_processes() -> set[int]:
    """Processes of a Ray cluster on this machine: its own (raylet, GCS, workers: their command line names a Ray
    session) and whatever runs below its workers (ropespec's workers: they inherit the raylet's pid in the
    environment)."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"RAY_RAYLET_PID=" in env or b"/ray/session_" in cmd:
            found.add(int(pid))
    return found


def _gone(before: set[int], seconds: float = 10.0) -> set[int]:
    deadline = time.monotonic() + seconds
    while (left := _ray_processes() - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _verdicts(report: Path) -> dict:
    data = json.loads(report.read_text())
    return {i["name"]: [(r["invariant"], r["property"], r["status"], r["diagnosis"]) for r in i["results"]]
            for i in data["implementations"]}


def test_a_matrix_on_a_local_cluster_gives_the_j_verdicts_and_survives_a_lost_worker(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _targets(tmp_path)
    targets = ["ropespec.implementations.numpy_rope:make", "ropespec.implementations.zoo.rope.wrong_base:make", "cluster_targets.py:crash",
               "cluster_targets.py:killed_once"]
    before = _ray_processes()
    # a process of its own, as a user's shell starts it: Ray's runtime (its threads, its signal handlers) stays out of
    # the suite's workers, where a later test's interrupt went missing after it
    proc = subprocess.run([sys.executable, "-m", "ropespec", "check", *targets, *MATRIX, "--cluster", "local",
                           "--json", "cluster.json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "checked on a local Ray cluster on this machine (" in proc.stdout, proc.stdout[:500]
    assert not _gone(before), "left running after the run"
    worker, below = map(int, (tmp_path / "killed").read_text().split())  # the fault happened, mid-check
    assert not _alive(worker) and not _alive(below)

    assert main(["check", *targets, *MATRIX, "-j", "2", "--json", "local.json"]) == 1
    capsys.readouterr()
    on_cluster, local = _verdicts(tmp_path / "cluster.json"), _verdicts(tmp_path / "local.json")
    assert on_cluster == local
    assert len(on_cluster) == 8 and all(len(v) == 3 for v in on_cluster.values()), on_cluster  # none lost or twice
    statuses = {name.split("[")[0]: {s for _, _, s, _ in v} for name, v in on_cluster.items()}
    assert statuses == {"ropespec.implementations.numpy_rope:make": {"pass"}, "ropespec.implementations.zoo.rope.wrong_base:make": {"fail"},
                        "cluster_targets.py:crash": {"fail"}, "cluster_targets.py:killed_once": {"pass"}}, statuses
    assert {d for v in on_cluster.values() for _, _, _, d in v} >= {"crash"}
    retried = [i for i in json.loads((tmp_path / "cluster.json").read_text())["implementations"]
               if any("retried on the cluster" in n for n in i["notes"])]
    assert len(retried) == 1 and retried[0]["name"].startswith("cluster_targets.py:killed_once["), retried
    assert "WorkerCrashedError" in " ".join(retried[0]["notes"])


@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_cancels_the_tasks_and_leaves_nothing_running(signum, code, word, tmp_path):
    """Ctrl-C (or SIGTERM, for which Ray's core installs a handler of its own) while a task is mid-check: the exit
    code within seconds, the report says so, and neither the cluster nor a worker below it is left."""
    _targets(tmp_path)
    before = _ray_processes()
    proc = subprocess.Popen([sys.executable, "-m", "ropespec", "check", "cluster_targets.py:slow", "--expect",
                             "llama3.1-8b", "--profile", "ci", "--seed", "1", "--cluster", "local", "--json", "r.json"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        running = _ray_processes() - before
        assert running, "no cluster while the check runs"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, err[-2000:]
    assert json.loads((tmp_path / "r.json").read_text())["interrupted"] == word
    assert not _gone(before), "left running after Ctrl-C"


@pytest.mark.parametrize("address, says", [
    ("127.0.0.1:1", "--cluster: cannot reach a Ray head node at 127.0.0.1:1"),
    ("somewhere", "--cluster: expected local or a Ray head node's HOST:PORT"),
])
def test_an_address_nothing_answers_on_is_one_line_before_any_check(address, says, tmp_path, capsys):
    report = tmp_path / "r.json"
    report.write_text("{}")
    assert main(["check", "ropespec.implementations.numpy_rope:make", "--cluster", address, "--json", str(report)]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err
    assert report.read_text() == "{}"  # nothing ran, nothing was cleared
