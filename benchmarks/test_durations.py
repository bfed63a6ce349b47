"""Each test's time in README's `pytest`, recorded for the tiers: a test of the fast tier that takes ``SLOW_S`` seconds
or more on the recording machine runs in the slow tier (`pytest -m slow`) instead, unless it is the fast tier's
coverage of an invariant, family, form or fault word (conftest.py: ``SLOW_S``, ``FAST_ALWAYS``).

    python benchmarks/test_durations.py [--from-log FILE]

Runs README's `pytest` with the recorded split off (``ROPESPEC_TIERS=all``: every test the fast tier would hold
without it) and ``--durations=0``, then writes ``tests/durations.json``: each test's seconds (setup, call and teardown
summed) from 0.5 s up, with the date, the machine and the run's wall time. ``--from-log`` reads the output of such a run
instead of running it. Record again on an idle machine after tests are added or made faster.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "durations.json"
#: the shortest time recorded: below it a test is fast at any threshold the tiers would take
RECORD_FROM_S = 0.5
_LINE = re.compile(r"\s*([0-9.]+)s (?:call|setup|teardown)\s+(\S.*)$")
_SUMMARY = re.compile(r"(\d+) passed.* in ([0-9.]+)s")


def durations(log: str) -> dict[str, float]:
    """Each test's seconds, setup, call and teardown summed, from pytest's ``--durations=0`` lines."""
    seconds: collections.Counter = collections.Counter()
    for line in log.splitlines():
        m = _LINE.match(line)
        if m:
            seconds[m.group(2).strip()] += float(m.group(1))
    return dict(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-log", type=Path, help="the output of `pytest --durations=0` with ROPESPEC_TIERS=all")
    args = parser.parse_args(argv)
    if args.from_log:
        log, wall = args.from_log.read_text(), None
    else:
        start = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--durations=0"], cwd=ROOT,
                             env={**os.environ, "ROPESPEC_TIERS": "all"}, capture_output=True, text=True)
        log, wall = run.stdout + run.stderr, time.monotonic() - start
        if run.returncode != 0:
            print(log[-3000:], file=sys.stderr)
            print("test_durations.py: the run failed; nothing recorded", file=sys.stderr)
            return 1
    seconds = durations(log)
    if not seconds:
        print("test_durations.py: no --durations lines in the log", file=sys.stderr)
        return 2
    summary = _SUMMARY.search(log)
    record = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "wall_s": round(wall, 1) if wall is not None else (float(summary.group(2)) if summary else None),
        "tests": len(seconds),
        "seconds": {k: round(v, 2) for k, v in sorted(seconds.items()) if v >= RECORD_FROM_S},
    }
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(OUT)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(record['seconds'])} tests of {len(seconds)} from {RECORD_FROM_S} s up, "
          f"{sum(seconds.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
