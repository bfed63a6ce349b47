"""What running the code under test in a worker process costs: a plain numpy function's verdict.

    python benchmarks/isolation_overhead.py [--repeats 3] [--baseline PATH]

Times ``ropespec check my_rope.py:apply --expect '{"head_dim": 128, "rope_theta": 500000}' --seed 1``
(README's own function, dev profile) as a user runs it: a fresh ``python -m ropespec`` each time, wall
clock, imports included. Three ways, interleaved, in one run:

* ``worker``: the implementation in its worker process (the default);
* ``in-process``: the same check through the API with ``isolate=False`` (no worker at all);
* ``baseline`` (with ``--baseline PATH``, a checkout of an older ropespec, e.g. ``git worktree add
  /tmp/old 4e018f5``): that version's command line, the same check.

Prints the median of ``--repeats`` runs of each and the ratios.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

MY_ROPE = '''
import numpy as np

def apply(x, positions):
    d = x.shape[1]
    inv_freq = 500000.0 ** (-np.arange(0, d, 2) / d)
    ang = positions[:, None] * inv_freq
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)
'''
EXPECT = '{"head_dim": 128, "rope_theta": 500000}'
IN_PROCESS = ("import sys; sys.path.insert(0, {folder!r}); from my_rope import apply; from ropespec import check; "
              "r = check(apply, {expect!r}, seed=1, isolate=False); sys.exit(0 if r.passed else 1)")


def timed(cmd: list[str], cwd: str, env: dict) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}... exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline", metavar="PATH", help="a checkout of an older ropespec to compare with")
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="ropespec-bench-")
    Path(folder, "my_rope.py").write_text(MY_ROPE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    ways = {
        "worker": ([sys.executable, "-m", "ropespec", "check", "my_rope.py:apply", "--expect", EXPECT, "--seed", "1"], env),
        "in-process": ([sys.executable, "-c", IN_PROCESS.format(folder=folder, expect=EXPECT)], env),
    }
    if args.baseline:
        old = dict(env, PYTHONPATH=str(Path(args.baseline).resolve()))
        ways["baseline"] = ([sys.executable, "-m", "ropespec", "check", "my_rope.py:apply", "--expect", EXPECT,
                             "--seed", "1"], old)
    times: dict[str, list[float]] = {k: [] for k in ways}
    for _ in range(args.repeats):
        for name, (cmd, e) in ways.items():
            times[name].append(timed(cmd, folder, e))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{date.today()}, {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}; "
          f"median of {args.repeats}, a fresh process each (imports included)")
    for name, m in med.items():
        print(f"  {name:<11} {m:6.2f} s   (runs: {', '.join(f'{t:.2f}' for t in times[name])})")
    print(f"  worker / in-process: {med['worker'] / med['in-process']:.2f}x")
    if "baseline" in med:
        print(f"  worker / baseline:   {med['worker'] / med['baseline']:.2f}x")


if __name__ == "__main__":
    main()
