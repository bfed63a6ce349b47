"""Workers size their thread pools to the cores they share (ropespec.implementations.boundary.threads): a 2-core
machine's decoder battery took 122.6 s under load with torch's default pools against 20.5 s with one thread each."""

from __future__ import annotations

import re

import pytest

from ropespec.implementations.boundary import threads

#: a factory that says the threads its worker's torch computes on (its decline is the skip's reason)
SAYS = '''
def make(expect):
    import torch
    raise NotImplementedError(f"computes on {torch.get_num_threads()} threads")
'''


def _worker_threads(cli, folder, *args) -> int:
    (folder / "say_threads.py").write_text(SAYS)
    out = cli("check", "say_threads.py:make", "--array", "torch", "--invariant", "rope.conformance", *args, cwd=folder)
    return int(re.search(r"computes on (\d+) threads", out.stdout + out.stderr).group(1))


def test_a_worker_computes_on_the_cores_it_shares(cli, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    for name in (*threads.POOLS, threads.CHOSEN, threads.JOBS, "PYTEST_XDIST_WORKER_COUNT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(threads, "cores", lambda: 2)
    assert threads.per_worker() == 1  # a runner and its worker on two cores: one thread each
    assert _worker_threads(cli, tmp_path) == 1
    monkeypatch.setattr(threads, "cores", lambda: 16)
    assert threads.per_worker() == 8 and threads.per_worker({threads.JOBS: "4"}) == 2
    assert threads.per_worker({"PYTEST_XDIST_WORKER_COUNT": "2"}) == 4


def test_a_count_the_user_chose_is_kept(cli, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv(threads.CHOSEN, "3")
    assert _worker_threads(cli, tmp_path) == 3
    monkeypatch.delenv(threads.CHOSEN)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert _worker_threads(cli, tmp_path) == 2
    assert threads.sized({"OMP_NUM_THREADS": "5"})["OMP_NUM_THREADS"] == "5"


def test_each_j_runner_says_how_many_runs_compute_at_once(monkeypatch):
    """ropespec check -j N starts its runners with ROPESPEC_JOBS=N, which their workers divide the cores by."""
    from ropespec import scheduler

    started = []

    class Runner:
        def __init__(self, module, env=None, **kw):
            started.append(env or {})
            raise RuntimeError("enough")

    monkeypatch.setattr(scheduler, "Child", Runner)
    from ropespec.implementations.loader import LoadRequest
    from ropespec.request import CheckRequest

    with pytest.raises(RuntimeError):
        scheduler.check_in_processes([LoadRequest("a.py:f"), LoadRequest("b.py:f"), LoadRequest("c.py:f")],
                                     CheckRequest(), jobs=2)
    assert started and started[0][threads.JOBS] == "2"
