"""A whole model's battery: how long and how much memory ``ropespec check --family model`` takes on a tiny model.

    python benchmarks/model_battery.py [--repeats 3] [--only NAME ...] [--record]

Each case is a fresh process tree (``python -m ropespec check ...``: ropespec and the worker that holds the model),
wall clock, imports included; the runs of all cases are interleaved (case 1, case 2, ..., then again) so that a noisy
machine hurts every case alike. Memory is the tree's: the resident sets of every process in it summed, read from
/proc every POLL seconds, the largest sum seen (what the machine had to hold at once, workers included). Every case
must end with exit 0 (every model property checked and held). Target: a tiny model's whole battery at
most 60 s and 2 GB on 2 cores, the median of the runs. Prints one Markdown table with the command, date and machine;
``--record`` also writes it to ``benchmarks/model_battery.json`` (RECORD), which README quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "model_battery.json"
POLL = 0.05
#: the targets: seconds and bytes, each of the median run
TARGET_S, TARGET_BYTES = 60.0, 2 << 30
_HF = "ropespec.implementations.adapters.hf_model"
#: name -> argv after ``python -m ropespec check``, run in the repository's root (each the whole model battery: every
#: model.* invariant)
CASES = {
    "transformers Llama, tiny (llama3.1-8b's RoPE)": [f"{_HF}:llama", "--expect", "llama3.1-8b"],
    "transformers Qwen2-VL, tiny (M-RoPE's text path)": [f"{_HF}:qwen2_vl", "--expect", "qwen2-vl-7b"],
    "transformers Phi-3, tiny (LongRoPE, phi-3-mini-128k's config.json)": [
        f"{_HF}:phi3", "--expect", "tests/fixtures/configs/phi-3-mini-128k.json"],
    "a config.json as the target (Gemma 3: head_dim 256, a sliding and a full layer)": [
        "tests/fixtures/configs/gemma-3-4b.json"],
    "a hand-written torch decoder (examples/my_decoder.py)": [
        "examples/my_decoder.py:make", "--expect", '{"head_dim": 16, "dtype": "float64"}'],
    "numpy-model (ropespec's own numpy decoder)": ["ropespec.implementations.numpy_model:make"],
}
COMMON = ["--family", "model", "--dtype", "float64", "--seed", "1"]


def _tree_rss(root: int) -> int:
    """The resident bytes of ``root`` and every process below it (from /proc: children by their parent)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as f:
                rss[int(entry)] = int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue
        parents[int(entry)] = int(fields[1])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def run_once(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak tree bytes) of one fresh run; exits if the run did not pass."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ropespec", "check", *argv, *COMMON], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(POLL)
    seconds = time.perf_counter() - start
    out, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit {proc.returncode}\n{out[-2000:]}\n{err[-2000:]}")
    return seconds, peak


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor() or "?")
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def readme_section(record: dict) -> str:
    """What README quotes of a run (tests/test_readme.py checks README holds it): the command, date and machine, and a
    row per case."""
    lines = [f"`{record['command']}`, {record['date']}, {record['machine']}: a tiny model's whole battery (`--family "
             f"model`, every model invariant), the median of {record['repeats']} fresh runs, wall clock with imports, "
             "and the largest memory the process tree held at once (ropespec and its worker):", "",
             "| model | median | peak memory | target (<= 60 s, <= 2 GB) |", "|---|---|---|---|"]
    lines += [f"| {row['case']} | {row['median_s']:.1f} s | {row['median_peak_gb']:.2f} GB | "
              f"{'met' if row['met'] else 'NOT MET'} |" for row in record["rows"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", action="append", default=[], help="a case whose name contains this")
    parser.add_argument("--record", action="store_true", help=f"write the run to {RECORD.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    names = [n for n in CASES if not args.only or any(o in n for o in args.only)]
    runs: dict[str, list[tuple[float, int]]] = {n: [] for n in names}
    for _ in range(args.repeats):
        for name in names:
            runs[name].append(run_once(CASES[name]))
            print(f"{name}: {runs[name][-1][0]:.1f} s, {runs[name][-1][1] / 2**30:.2f} GB", file=sys.stderr)
    command = " ".join(["python benchmarks/model_battery.py", *(f"--only {o!r}" for o in args.only),
                        *([f"--repeats {args.repeats}"] if args.repeats != 3 else []), *(["--record"] if args.record else [])])
    rows = []
    for name in names:
        seconds = statistics.median(s for s, _ in runs[name])
        peak = statistics.median(b for _, b in runs[name])
        met = seconds <= TARGET_S and peak <= TARGET_BYTES
        rows.append(dict(case=name, command="ropespec check " + " ".join(CASES[name] + COMMON),
                         median_s=round(seconds, 2), median_peak_gb=round(peak / 2**30, 2),
                         runs_s=[round(s, 2) for s, _ in runs[name]],
                         runs_peak_gb=[round(b / 2**30, 2) for _, b in runs[name]], met=met))
    record = dict(command=command, date=date.today().isoformat(), machine=machine(), repeats=args.repeats, rows=rows)
    print(readme_section(record))
    if args.record:
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
    return 0 if all(row["met"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
