"""``ropespec check --cluster ADDRESS|local``: the checks of a run as tasks on a Ray cluster (the ``cluster`` extra).

Ray schedules, places and restarts; ropespec only submits. Each implementation (a TARGET in one configuration) is
one task: it runs :func:`ropespec.runner.run_job` in a Ray worker, so its code runs in a worker process of ropespec's
below that Ray worker, exactly as with ``-j``, and yields the same messages, which stream back as they come (Ray's
streaming generators). A task asks for one CPU, and a ``--device cuda`` one also for one GPU, so Ray sends it only to
a node that has one. A task lost with its Ray worker or node is run once more from the start (what it had reported
is dropped first, so no check counts twice) and its report says so; lost twice, it is an error in the report. Ctrl-C
cancels every task still running (Ray kills their workers, and with them ropespec's worker processes) and a local
cluster is shut down: nothing is left running.

Every node needs ropespec installed and the TARGET files at the paths this machine sees them (a shared file system):
a task runs in this process's working directory, with its import path, where that exists on the node.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import re
import signal
import socket
import sys
import tempfile
import threading
from typing import Callable, Iterator

from ropespec.implementations.boundary.messages import Job
from ropespec.implementations.loader import LoadRequest
from ropespec.properties.results import Result
from ropespec.inputs import UsageError
from ropespec.results import ImplementationReport
from ropespec.runner import run_job
from ropespec.request import CheckRequest
from ropespec.scheduler import Collector, job
from ropespec.signals import raise_if_signalled

#: what --cluster takes besides "local": a Ray head's address, HOST:PORT (its GCS port, 6379 unless changed)
_ADDRESS = re.compile(r"^(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(?P<port>\d{1,5})$")
#: seconds to wait for a head node to answer on its port before saying it cannot be reached
CONNECT_TIMEOUT_S = 5.0
#: a lost task is run this many more times
RETRIES = 1


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--cluster: needs Ray, which is not installed (pip install -e '.[cluster]')") from None
    return ray


def parse_address(value: str) -> tuple[str, int] | None:
    """``local`` (None) or a head node's HOST:PORT; UsageError (one line) for anything else."""
    if value == "local":
        return None
    m = _ADDRESS.match(value.removeprefix("ray://") if value.startswith("ray://") else value)
    if not m or not 0 < int(m["port"]) < 65536:
        raise UsageError(f"--cluster: expected local or a Ray head node's HOST:PORT (port 1-65535), got {value!r}")
    return m["host"].strip("[]"), int(m["port"])


@contextlib.contextmanager
def _stderr_held(said: list[str]):
    """Ray's own C++ log lines while it connects (one per failed try) kept off the terminal, and their last line in
    ``said``: the outcome is said in ropespec's one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        try:
            os.dup2(held.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            said.extend(held.read().decode(errors="replace").splitlines()[-1:])


@contextlib.contextmanager
def _signals_kept():
    """Ray installs its own SIGTERM handlers while it starts (Python's, which exits, and its core's, which prints a
    stack and ends the process): ropespec's, which stop the run and report what finished, are put back once Ray has
    started."""
    main = threading.current_thread() is threading.main_thread()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        yield
    finally:
        for s, handler in handlers.items():
            if handler is not None:
                signal.signal(s, handler)


def _rearm() -> None:
    """Ray's core may install its signal handlers below Python's later still (as its threads start): each turn of the
    run's loop puts Python's, and so ropespec's, back in place."""
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(s)
            if callable(handler):
                signal.signal(s, handler)


class Cluster:
    """A connection to a Ray cluster, started here when ``local``."""

    def __init__(self, address: str):
        self.address = address
        self.local = parse_address(address) is None
        self.ray = None

    def __enter__(self) -> "Cluster":
        if not self.local:  # an address nothing answers on is said before Ray is even imported
            host, port = parse_address(self.address)
            try:
                socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
            except OSError as e:
                raise UsageError(f"--cluster: cannot reach a Ray head node at {host}:{port} "
                                 f"({e.strerror or type(e).__name__}); start one with 'ray start --head' "
                                 f"or use --cluster local") from None
        ray = self.ray = _ray()
        quiet = dict(log_to_driver=False, logging_level=logging.ERROR, configure_logging=True)
        if self.local:  # on loopback, with this machine's cores: nothing reachable from outside
            with _signals_kept():
                ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False,
                         _node_ip_address="127.0.0.1", **quiet)  # a new cluster even where one runs already
        else:
            # Ray tries once a second for this many seconds (20 by default), each try a warning on stderr
            os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(round(CONNECT_TIMEOUT_S)))
            said: list[str] = []
            try:
                with _signals_kept(), _stderr_held(said):
                    ray.init(address=self.address, **quiet)
            except Exception as e:  # reachable, but no Ray head node (a proxy, another service) or one that refuses us
                if said and "InvalidAuthToken" in said[0]:
                    raise UsageError(f"--cluster: the Ray head node at {host}:{port} asks for its authentication "
                                     f"token: set RAY_AUTH_MODE=token here, with the cluster's token in "
                                     f"RAY_AUTH_TOKEN or ~/.ray/auth_token") from None
                raise UsageError(f"--cluster: {host}:{port} answers, but not as a Ray head node "
                                 f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
        return self

    def __exit__(self, *exc) -> bool:
        self.ray.shutdown()  # a local cluster ends with its processes; a remote one keeps only its own
        return False

    def describe(self) -> str:
        r = self.ray.cluster_resources()
        gpus = int(r.get("GPU", 0))
        where = "a local Ray cluster on this machine" if self.local else f"the Ray cluster at {self.address}"
        nodes = sum(1 for n in self.ray.nodes() if n.get("Alive"))
        return (f"checked on {where} ({int(r.get('CPU', 0))} CPUs" + (f", {gpus} GPUs" if gpus else "")
                + f" on {nodes} node{'s' * (nodes != 1)})")


def _task(job: Job, cwd: str, path: list[str]) -> Iterator:
    """One implementation's check in a Ray worker: :func:`run_job`'s messages as they come (a long property's progress
    included, from the thread that runs the check)."""
    if os.path.isdir(cwd):  # the TARGET is found as the command line's process finds it
        os.chdir(cwd)
    sys.path[:0] = [p for p in path if p not in sys.path and (not p or os.path.exists(p))]
    said: queue.Queue = queue.Queue()
    end = object()

    def work():
        try:
            for message in run_job(job, said.put):
                said.put(message)
        except BaseException as e:  # ropespec's own error, raised where the driver sees it
            said.put(e)
        finally:
            said.put(end)

    threading.Thread(target=work, daemon=True, name="ropespec-check").start()
    while (message := said.get()) is not end:
        if isinstance(message, BaseException):
            raise message
        yield message


def check_on_cluster(
    cluster: Cluster,
    requests: list[LoadRequest],
    asked: CheckRequest,
    *,
    on_result: Callable[[Result], None] | None = None,
    on_implementation: Callable[[ImplementationReport], None] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    on_forget: Callable[[list[Result]], None] | None = None,
    into: list[ImplementationReport] | None = None,
) -> list[ImplementationReport]:
    """:func:`ropespec.scheduler.check_in_processes` with each implementation a task on ``cluster``. Results stream
    back as they finish; ``on_forget`` gets the results of an attempt that was lost (dropped before its retry). On Ctrl-C or SIGTERM every task still running is
    cancelled and ``into`` holds what finished. Raises TargetError when a TARGET does not load."""
    ray = cluster.ray
    if any(r.on_gpu for r in requests) and not ray.cluster_resources().get("GPU"):  # its tasks would wait forever
        raise UsageError("--device cuda: the Ray cluster has no GPU for its tasks (ray status lists its resources)")
    collector = Collector(requests, on_result=on_result, on_implementation=on_implementation, on_progress=on_progress,
                          into=into)
    remote = ray.remote(_task)
    cwd, path = os.getcwd(), list(sys.path)
    pending: dict = {}

    def submit(i: int, attempt: int) -> None:
        task_job = job(i, requests[i], asked)
        task = remote.options(num_cpus=1, num_gpus=1 if requests[i].on_gpu else 0, max_retries=0,
                              name=f"ropespec:{requests[i].name or i}")
        pending[task.remote(task_job, cwd, path)] = (i, attempt)

    try:
        for i in range(len(requests)):
            submit(i, 0)
        while pending:
            _rearm()
            raise_if_signalled()
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for task in ready:
                i, attempt = pending[task]
                try:
                    message = ray.get(next(task))
                except StopIteration:
                    del pending[task]
                    continue
                except ray.exceptions.RayTaskError as e:  # raised by ropespec's code in the task: not retried
                    del pending[task]
                    collector.lost(i, f"the cluster task raised {str(e).strip().splitlines()[-1]}")
                    continue
                except ray.exceptions.RayError as e:  # its Ray worker or node was lost
                    del pending[task]
                    why = f"{type(e).__name__}: {str(e).strip().splitlines()[0]}" if str(e).strip() else type(e).__name__
                    if attempt < RETRIES:
                        dropped = collector.forget(i, f"retried on the cluster: its first run was lost ({why})")
                        if on_forget:
                            on_forget(dropped)
                        submit(i, attempt + 1)
                    else:
                        collector.lost(i, f"the cluster task was lost {attempt + 1} times (last: {why})")
                    continue
                if collector.take(i, message):
                    del pending[task]
    finally:
        for task in pending:  # Ctrl-C, or a TARGET that does not load: nothing of this run goes on
            with contextlib.suppress(Exception):
                ray.cancel(task, force=True)
    return collector.reports


__all__ = ["Cluster", "check_on_cluster", "parse_address"]
