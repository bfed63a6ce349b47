"""Every RoPE model type of the installed transformers, checked: the table README holds.

    python benchmarks/transformers_sweep.py [-j 2 | --cluster local] [--profile ci] [--only llama,stablelm] [--json PATH]

Discovery (ropespec.implementations.adapters.hf_models.discover) finds every model type whose modeling module defines a
rotary embedding class of its own; each checkable one is checked with its own rotary embedding and apply function
under its config class's defaults, against the expectation the config.json reader makes of that config; then every
adapter that checks a found model type's rotary code where that cannot (hf_models.adapters: the hf_axes adapters of
vision towers and text M-RoPE under the released models' presets, the hand-written ones of GPT-J's form). Each in
float32 and bfloat16 (the default class), and in the strict class (exact angles; token positions up to 2^20, a vision
grid at its own size) — on the matrix machinery: ropespec's -j runners, or a Ray cluster. Prints one row per model type
and adapter (the expectation, the verdict per check, the words of what failed, seconds), then the model types that
nothing checks, with the reason each.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from datetime import date

from verdict_time import machine  # benchmarks/: one way to name the machine

from ropespec.implementations.adapters import hf_models
from ropespec import formats, report
from ropespec.cluster import Cluster, check_on_cluster
from ropespec import matrix
from ropespec.results import CheckResult
from ropespec.request import CheckRequest
from ropespec.scheduler import check_in_processes
from ropespec.spec.expectation import Expect

DTYPES = ("float32", "bfloat16")
#: the strict class (angles and inverse frequencies held to exact) at long context: float32 output, positions up to
#: LONG - 1, where float32 angles stop being exact (a promise transformers does not make; its column says where each
#: model's code stands, not whether it is wrong)
LONG = 2**20


def strict(expect):
    """The strict class of ``expect``: token positions up to LONG - 1; a vision grid's axes (per-axis, parity) at their
    own max_position (patches per side: its code's tables end there, and a grid 2^20 patches wide is no image)."""
    grid = expect.axes_kind() in ("per-axis", "parity")
    return Expect.from_dict({**expect.to_dict(), "dtype": "float32", "angle_dtype": "exact", "inv_freq_dtype": "exact",
                             "max_position": expect.max_position if grid else LONG})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--cluster", help="a Ray head node's HOST:PORT, or local")
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="comma-separated model types")
    ap.add_argument("--json", help="write the run's report (ropespec check --json's schema)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import transformers

    found = hf_models.discover(tuple(args.only.split(",")) if args.only else None)
    checkable = [f for f in found if f.checkable]
    adapters = hf_models.adapters(found)
    # (label, the table's model type cell, TARGET, expectation, model type): each model type's own rotary code by hf_models, then
    # what the adapters check (a vision tower, a text M-RoPE, GPT-J's form) under the released model's preset
    rows = [(f.model_type, f.model_type, f"ropespec.implementations.adapters.hf_models:{f.model_type}",
             hf_models.expectation_of(f), f.model_type) for f in checkable]
    rows += [(a.label, f"{a.model_type} ({a.label}{f', preset {a.preset}' if a.preset else ''})", a.target,
              a.expectation(), a.model_type) for a in adapters]
    requests = []  # one TARGET per row, in the matrix of its own expectation and the two dtypes
    for label, _, target, expect, _ in rows:
        configs = [matrix.Configuration(label, expect, dtype, "nd") for dtype in DTYPES]
        configs.append(matrix.Configuration(f"{label}-strict", strict(expect), "float32", "nd"))
        requests += matrix.requests_for([target], configs, lambda c: dict(array="torch", dtype=c.dtype))
    t0 = time.perf_counter()
    seconds: dict[str, float] = {}  # its warm-up, then from its first result to its last (what the runner reports)
    first: dict[str, float] = {}

    def finished(rep):
        seconds[rep.impl.name] = (rep.impl.warmup_seconds or 0.0) + time.perf_counter() - first.pop(rep.impl.name, t0)
        print(f"{rep.impl.name}: {report.counts_text(rep.results)}", file=sys.stderr, flush=True)

    def result(r):
        first.setdefault(r.implementation, time.perf_counter())

    shown = dict(on_result=result, on_implementation=finished)
    asked = CheckRequest(profile=args.profile, seed=args.seed)  # every property, the sweep's profile and seed
    if args.cluster:
        with Cluster(args.cluster) as cluster:
            reports = check_on_cluster(cluster, requests, asked, **shown)
    else:
        reports = check_in_processes(requests, asked, jobs=args.j, **shown)
    took = time.perf_counter() - t0
    if args.json:
        with open(args.json, "w") as out:
            out.write(formats.json_text(CheckResult(reports, args.seed, args.profile)))
    by_type: dict[str, dict[str, object]] = {}
    for rep in reports:
        by_type.setdefault(rep.impl.configuration["expect"], {})[rep.impl.configuration["dtype"]] = rep
    covered = {a.model_type for a in adapters}
    checked = {f.model_type for f in checkable} | covered
    # a model type holds where each of its rows (its own code, each adapter's) held in both dtypes
    failed_types = {model_type for label, model_type in ((r[0], r[4]) for r in rows)
                    if any(verdict(by_type.get(label, {}).get(dtype), []) != "held" for dtype in DTYPES)}
    held = checked - failed_types
    print(f"`python benchmarks/transformers_sweep.py -j {args.j} --profile {args.profile}`, transformers "
          f"{transformers.__version__}, {date.today()}, {machine()}: {len(found)} model types whose source has RoPE "
          f"(a rotary class or rotary functions of their own), {len(checkable)} checked by their own rotary code "
          f"and {len(adapters)} rotary codes by adapters ({len(covered - {f.model_type for f in checkable})} more "
          f"model types): {len(checked)} model types checked, {len(held)} of them held in float32 and bfloat16 by "
          f"every check; {len(requests)} implementations, {took:.0f} s\n")
    print(f"| model type | expectation | float32 | bfloat16 | failed (word) | strict, to 2^{LONG.bit_length() - 1} (a "
          f"grid: its own size) | s (warm-up, then first to last result, all three) |")
    print("|---|---|---|---|---|---|---|")
    for label, cell, _, _, _ in rows:
        reps = by_type.get(label, {})
        words: list[str] = []
        strict_words: list[str] = []
        cells = [verdict(reps.get(dtype), words) for dtype in DTYPES]
        strict_rep = by_type.get(f"{label}-strict", {}).get("float32")
        long = verdict(strict_rep, strict_words)
        if strict_words:
            long += f" {' '.join(dict.fromkeys(w.split(' ', 1)[1] for w in strict_words))}"
            held = [int(m) for r in strict_rep.results for m in re.findall(r"held up to p = (\d+)", r.message)]
            long += f", held up to p = {min(held)}" if held else ""
        secs = sum(seconds.get(rep.impl.name, 0.0) for rep in [*reps.values(),
                                                                *by_type.get(f"{label}-strict", {}).values()])
        expect = reps[DTYPES[0]].impl.expect.describe() if DTYPES[0] in reps and reps[DTYPES[0]].impl.expect else ""
        print(f"| {cell} | {expect} | {cells[0]} | {cells[1]} | {'; '.join(dict.fromkeys(words))} | {long} "
              f"| {secs:.1f} |")
    print("\nnot checked:\n")
    for f in found:
        if not f.checkable and f.model_type not in covered:
            print(f"- {f.model_type}: {f.reason}")


def verdict(rep, words: list[str]) -> str:
    """held / fail / skipped / not run for one check, the words of what failed added to ``words``."""
    if rep is None:
        return "not run"
    bad = [r for r in rep.results if r.status in ("fail", "error")]
    words += [f"{r.invariant} [{r.diagnosis or r.status}]" for r in bad]
    return "held" if rep.checked and not bad else "fail" if bad else "skipped"


if __name__ == "__main__":
    main()
