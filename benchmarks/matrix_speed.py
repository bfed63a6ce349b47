"""A 24-check configuration matrix three ways: serially, on two -j runners, and on a local Ray cluster.

    python benchmarks/matrix_speed.py [--repeats 3] [--profile ci]

The matrix: three TARGETs (numpy's factory, the stdlib one and the zoo's wrong base) x four presets (Llama 3.1 8B,
Mistral 7B, GPT-J 6B, Qwen2.5 7B) x two dtypes (float32, float64): 24 implementations, every invariant, one seed. Each
way is a fresh ``python -m ropespec check ... --json`` as a user runs it (wall clock, imports and, for the cluster,
starting and stopping it included); the ways are interleaved, ``--repeats`` times. Prints the median of each, the
ratios to the serial run measured in the same run, and checks that the three reports hold the same verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date

from verdict_time import machine  # benchmarks/: one way to name the machine

TARGETS = ["ropespec.implementations.numpy_rope:make", "ropespec.implementations.stdlib_rope:make", "ropespec.implementations.zoo.rope.wrong_base:make"]
PRESETS = ["llama3.1-8b", "mistral-7b-v0.1", "gpt-j-6b", "qwen2.5-7b"]
WAYS = {"serial": [], "-j 2": ["-j", "2"], "--cluster local": ["--cluster", "local"]}


def command(profile: str, report: str, way: list[str]) -> list[str]:
    expects = [a for p in PRESETS for a in ("--expect", p)]
    return [sys.executable, "-m", "ropespec", "check", *TARGETS, *expects, "--dtype", "float32,float64",
            "--profile", profile, "--seed", "1", "--json", report, *way]


def verdicts(report: str) -> list:
    with open(report) as f:
        data = json.load(f)
    return [(i["name"], [(r["invariant"], r["property"], r["status"], r["diagnosis"]) for r in i["results"]])
            for i in data["implementations"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", default="ci")
    args = ap.parse_args()
    times: dict[str, list[float]] = {w: [] for w in WAYS}
    seen: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for way, extra in WAYS.items():
                report = os.path.join(tmp, "r.json")
                t0 = time.perf_counter()
                proc = subprocess.run(command(args.profile, report, extra), capture_output=True, text=True)
                times[way].append(time.perf_counter() - t0)
                if proc.returncode != 1:  # the wrong base fails: exit 1 is the verdict
                    sys.exit(f"{way}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
                seen.setdefault(way, verdicts(report))
                if verdicts(report) != seen["serial"]:
                    sys.exit(f"{way}: its verdicts differ from the serial run's")
    checks = len(seen["serial"])
    print(f"`python benchmarks/matrix_speed.py --repeats {args.repeats} --profile {args.profile}`, {date.today()}, "
          f"{machine()}; "
          f"{checks} implementations ({len(TARGETS)} TARGETs x {len(PRESETS)} presets x 2 dtypes), the same verdicts "
          f"all three ways; median of {args.repeats}, wall clock, fresh process:\n")
    print("| way | median | runs | serial / way |")
    print("|---|---|---|---|")
    serial = statistics.median(times["serial"])
    for way, ts in times.items():
        m = statistics.median(ts)
        print(f"| {way} | {m:.1f} s | {', '.join(f'{t:.1f}' for t in ts)} | {serial / m:.2f}x |")


if __name__ == "__main__":
    main()
