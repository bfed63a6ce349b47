"""How many threads a worker computes on: the cores it shares, divided among the processes that compute at once.

A worker's numerical libraries (torch's intra-op pool, OpenMP, OpenBLAS, MKL) start one thread per core by default.
The code under test is small (a RoPE of a few rows, a tiny model's forward): it gains nothing from them, and where two
processes each keep a pool per core, they wait on each other. On a 2-core machine under load, a decoder's model
battery took 122.6 s with torch's default threads and 20.5 s with one. So each worker is given the cores this process
may use (its CPU affinity), shared among the processes that compute at once: each run in parallel (``ropespec check
-j N``'s runners: :data:`JOBS`; pytest-xdist's workers) holds a runner process and its worker, two a run. On a 2-core
machine that is one thread each. A count the user set (``ROPESPEC_THREADS``, or the libraries' own variables such as
``OMP_NUM_THREADS``) is kept.
"""

from __future__ import annotations

import os
import sys

#: the variable a -j runner process is started with: how many runs compute at once
JOBS = "ROPESPEC_JOBS"
#: the user's own count for every worker, over the rule
CHOSEN = "ROPESPEC_THREADS"
#: the variables the numerical libraries read their pool's size from
POOLS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parallel(env=os.environ) -> int:
    """How many runs compute at once: -j's runners, or pytest-xdist's workers, else one."""
    for name in (JOBS, "PYTEST_XDIST_WORKER_COUNT"):
        try:
            n = int(env.get(name) or 0)
        except ValueError:
            n = 0
        if n > 0:
            return n
    return 1


def per_worker(env=os.environ) -> int:
    """The threads one worker computes on: :data:`CHOSEN` where the user set it, else the cores shared by two
    processes (the runner and its worker) of each run computing at once, at least one."""
    try:
        chosen = int(env.get(CHOSEN) or 0)
    except ValueError:
        chosen = 0
    if chosen > 0:
        return chosen
    return max(1, cores() // (2 * parallel(env)))


def sized(env: dict) -> dict:
    """A worker's (or its fork server's) environment: each library's pool variable set to :func:`per_worker`, where
    the user did not set it."""
    n = str(per_worker(env))
    return {**{name: n for name in POOLS}, **env}


def limit_loaded() -> None:
    """In a worker, once the TARGET is loaded: torch's pool sized as the environment says (torch reads it once, and
    a worker forked from a template that imported torch keeps the template's)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        n = int(os.environ.get("OMP_NUM_THREADS") or 0)
    except ValueError:
        return
    try:
        if n > 0 and torch.get_num_threads() != n:
            torch.set_num_threads(n)
    except Exception:  # a torch without the call, or one that refuses it: its own pool stays
        pass
