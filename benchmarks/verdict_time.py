"""How long a user waits: the time to a verdict, as a user runs each command, and README's other timings.

    python benchmarks/verdict_time.py [--repeats 3] [--only NAME ...] [--pytest] [--slow] [--record]

Each case is a fresh process (``python -m ropespec ...``), wall clock, imports included; the runs of all
cases are interleaved (case 1, case 2, ..., then again) so a noisy machine hurts every case alike. The
import time of ``ropespec``'s command line is measured the same way and subtracted for the "after
imports" column. Prints one Markdown table (median of ``--repeats`` and every run) with the date and
the machine. ``--record`` also writes the run to ``benchmarks/verdict_time.json`` (RECORD: the command, date, machine,
every case's runs and the ratios), the last recorded output that README's figures are read from and checked against
(tests/test_readme.py). ``--pytest`` also times the README's test command, ``pytest`` (the fast tier, which
takes minutes: target 4 minutes), and ``--slow`` the slow tier, ``pytest -m slow``. The families' cases check one
shipped implementation of each family in its own properties.

Cases and targets (dev profile, 2 cores): a plain numpy function <= 3 s after imports, a plain multi-axis one
within 2x of it (the ratio of medians of one run), the
numpy factory <= 10 s, the torch factory <= 12 s, the transformers adapter <= 12 s; ``ropespec spec``
<= 2 s; ``decode.consistency`` with dynamic NTK at L = 2048 decoding to 2L < 20 s; ``precision --exhaustive``
over 2^20 positions at head_dim 128 <= 60 s; ``pytest`` <= 4 min. The same function in torch and in eager jax
(``TWINS``): a jax verdict within 3x of the torch one, and ``--exhaustive`` of either within 3x of numpy's (ratios of
medians in one run). jax keeps its compilations in ``~/.cache/ropespec/jax``: a first run on a machine compiles, the
runs after it read them back, and every run is listed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import date
from pathlib import Path

from ropespec.implementations.shipped import SHIPPED

ROOT = Path(__file__).resolve().parents[1]
#: the last run recorded with --record: README quotes it (tests/test_readme.py reads both)
RECORD = ROOT / "benchmarks" / "verdict_time.json"
MY_ROPE = "# my_rope.py" + (ROOT / "README.md").read_text().split("```python\n# my_rope.py", 1)[1].split("```", 1)[0]
PY = [sys.executable, "-m", "ropespec"]
#: README's my_rope.py as a user writes it in torch and in eager JAX (MaxText's way): the same function per array kind
TWINS = {
    "torch_rope_twin.py": """import torch

def apply(x, positions):
    d = x.shape[1]
    inv_freq = 500000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = positions[:, None].double() * inv_freq
    c, s = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    x1, x2 = x[:, : d // 2], x[:, d // 2 :]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=1)
""",
    "jax_rope_twin.py": """import jax.numpy as jnp

def apply(x, positions):
    d = x.shape[1]
    inv_freq = 500000.0 ** (-jnp.arange(0, d, 2, dtype=jnp.float64) / d)
    ang = positions[:, None].astype(jnp.float64) * inv_freq
    c, s = jnp.cos(ang).astype(x.dtype), jnp.sin(ang).astype(x.dtype)
    x1, x2 = x[:, : d // 2], x[:, d // 2 :]
    return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1)
""",
}
_LLAMA = '{"head_dim": 128, "rope_theta": 500000}'
_EXHAUSTIVE = ["--exhaustive", "--max-position", "1048576", "--expect",
               '{"head_dim": 128, "rope_theta": 500000, "max_position": 1048576}']

#: name -> (argv after ``python -m ropespec``, target in seconds or None)
CASES = {
    # what every check imports before it checks anything (numpy, sympy-free spec, hypothesis, rich, the properties)
    "imports": (["-c", "import ropespec.cli, ropespec.api, ropespec.properties.framework, ropespec.reference"], None),
    "plain function (README's my_rope.py)": (["check", "my_rope.py:apply", "--expect",
                                              '{"head_dim": 128, "rope_theta": 500000}', "--seed", "1"], 3.0),
    "plain multi-axis function (examples/multi_axis.py:qwen2_vl)": (
        ["check", "multi_axis.py:qwen2_vl", "--expect", "qwen2-vl-7b", "--seed", "1"], None),
    "numpy factory": (["check", "ropespec.implementations.numpy_rope:make", "--seed", "1"], 10.0),
    "torch factory": (["check", "ropespec.implementations.torch_rope:make", "--array", "torch", "--seed", "1"], 12.0),
    "transformers adapter": (["check", "ropespec.implementations.adapters.hf:make", "--array", "torch", "--dtype", "bfloat16",
                              "--expect", "llama3.1-8b", "--seed", "1"], 12.0),
    "numpy thd layout": (["check", "ropespec.implementations.numpy_layout:thd", "--layout", "thd", "--seed", "1"], None),
    "jax factory": (["check", "ropespec.implementations.jax_rope:make", "--array", "jax", "--seed", "1"], None),
    # Triton kernels in Triton's interpreter (the triton extra): one program instance at a time, numpy underneath
    "Triton factory, interpreted (ropespec.implementations.triton_rope:make)": (
        ["check", "ropespec.implementations.triton_rope:make", "--array", "torch", "--seed", "1"], None),
    "Triton thd per-token, interpreted (ropespec.implementations.triton_rope:thd_per_token)": (
        ["check", "ropespec.implementations.triton_rope:thd_per_token", "--layout", "thd", "--positions", "per-token",
         "--array", "torch", "--seed", "1"], None),
    "a user's Triton kernel file, interpreted (examples/triton_rotary.py:kernel)": (
        ["check", "triton_rotary.py:kernel", "--form", "kernel", "--array", "torch", "--expect",
         '{"head_dim": 64, "rotary_dim": 48}', "--seed", "1"], None),
    "every shipped implementation": (["check", "--seed", "1"], None),
    "spec (Markdown)": (["spec", "--out", "spec.md"], 2.0),
    "spec (HTML)": (["spec", "--format", "html", "--out", "spec.html"], 2.0),
    "proofs": (["proofs"], None),
    "decode.consistency, dynamic NTK, L = 2048 to 2L (numpy decoder)": (
        ["check", "ropespec.implementations.numpy_decode:make", "--dtype", "float32", "--invariant", "decode.consistency",
         "--expect", '{"head_dim": 128, "max_position": 4096, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, '
                     '"original_max_position_embeddings": 2048}}', "--seed", "1"], 20.0),
    "precision --exhaustive, 2^20 positions (my_rope.py)": (["precision", "my_rope.py:apply", *_EXHAUSTIVE], 60.0),
    # the same function per array kind (TWINS): a verdict in float32 and bfloat16, and --exhaustive
    "my_rope.py in torch, float32": (["check", "torch_rope_twin.py:apply", "--array", "torch", "--expect", _LLAMA,
                                      "--seed", "1"], None),
    "my_rope.py in eager jax, float32": (["check", "jax_rope_twin.py:apply", "--array", "jax", "--expect", _LLAMA,
                                          "--seed", "1"], None),
    "my_rope.py in torch, bfloat16": (["check", "torch_rope_twin.py:apply", "--array", "torch", "--dtype", "bfloat16",
                                       "--expect", _LLAMA, "--seed", "1"], None),
    "my_rope.py in eager jax, bfloat16": (["check", "jax_rope_twin.py:apply", "--array", "jax", "--dtype", "bfloat16",
                                           "--expect", _LLAMA, "--seed", "1"], None),
    "precision --exhaustive, 2^20 positions (torch twin)": (
        ["precision", "torch_rope_twin.py:apply", "--array", "torch", *_EXHAUSTIVE], None),
    "precision --exhaustive, 2^20 positions (jax twin)": (
        ["precision", "jax_rope_twin.py:apply", "--array", "jax", *_EXHAUSTIVE], None),
}
# one shipped implementation per family (the first the registry lists), in its own family's properties
_FIRST_OF_FAMILY: dict = {}
for _s in SHIPPED:
    _FIRST_OF_FAMILY.setdefault(_s.shape.family, _s)
CASES.update({f"family {f} ({s.target})": (["check", s.target, *s.shape.flags(), "--dtype", s.dtypes[0], "--seed", "1"],
                                           None) for f, s in _FIRST_OF_FAMILY.items() if f != "rope"})
AFTER_IMPORTS = ("plain function (README's my_rope.py)",)  # targets stated after imports
#: (case, against, at most): ratios of medians measured in the same run
RATIOS = (("plain multi-axis function (examples/multi_axis.py:qwen2_vl)", "plain function (README's my_rope.py)", 2.0),
          ("Triton factory, interpreted (ropespec.implementations.triton_rope:make)", "torch factory", None),
          ("my_rope.py in eager jax, float32", "my_rope.py in torch, float32", 3.0),
          ("my_rope.py in eager jax, bfloat16", "my_rope.py in torch, bfloat16", 3.0),
          ("precision --exhaustive, 2^20 positions (torch twin)", "precision --exhaustive, 2^20 positions (my_rope.py)",
           3.0),
          ("precision --exhaustive, 2^20 positions (jax twin)", "precision --exhaustive, 2^20 positions (my_rope.py)",
           3.0))


#: the cases and ratios README's Speed section quotes from the record (every case is in the record and on the site)
README_CASES = ("plain function (README's my_rope.py)", "my_rope.py in torch, float32", "my_rope.py in eager jax, float32",
                "transformers adapter", "a user's Triton kernel file, interpreted (examples/triton_rotary.py:kernel)",
                "every shipped implementation", "spec (Markdown)", "precision --exhaustive, 2^20 positions (my_rope.py)",
                "pytest (README's test command, the fast tier)")
README_RATIOS = ("my_rope.py in eager jax, float32", "my_rope.py in eager jax, bfloat16",
                 "precision --exhaustive, 2^20 positions (torch twin)", "precision --exhaustive, 2^20 positions (jax twin)")


def readme_section(record: dict) -> str:
    """README's Speed section, made from a record of this script (``--readme`` prints it; tests/test_readme.py checks
    that README holds it as made, so no figure there is copied by hand)."""
    said = (f"`{record['command']}`, {record['date']}, {record['machine']}: the median of {record['repeats']} fresh "
            f"runs of each command, wall clock, imports included (imports alone: {record['imports_s']:.2f} s); ratios "
            "are of medians in the same run. Every case with its runs: `benchmarks/verdict_time.json`, and "
            "[Development](docs/development.md#timings).")
    lines = ["## Speed", "", *textwrap.wrap(said, 120, break_on_hyphens=False, break_long_words=False), "",
             "| command | median | target |", "|---|---|---|"]
    for name in README_CASES:
        case = record["cases"].get(name)
        if case:
            lines.append(f"| {name} | {case['median_s']:.2f} s | {case['verdict']} |")
    for r in record["ratios"]:
        if r["case"] in README_RATIOS:
            said = "" if r["at_most"] is None else f"{'met' if r['ratio'] <= r['at_most'] else 'NOT met'} " \
                                                   f"(<= {r['at_most']:g}x)"
            lines.append(f"| {r['case']} / {r['against']} | {r['ratio']:.2f}x | {said} |")
    return "\n".join(lines) + "\n"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def run(argv: list[str], cwd: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join((str(cwd), str(ROOT)))})  # this tree's code
    return time.perf_counter() - t0, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="substrings of case names to run (imports always run)")
    ap.add_argument("--pytest", action="store_true", help="also time `pytest` in the repository (minutes)")
    ap.add_argument("--slow", action="store_true", help="also time `pytest -m slow`, the slow tier (ten minutes)")
    ap.add_argument("--readme", action="store_true", help="print README's Speed section from the last record, and stop")
    ap.add_argument("--record", action="store_true", help=f"write the run to {RECORD.relative_to(ROOT)}, "
                                                          "README's source (a run of every case only)")
    args = ap.parse_args()
    if args.readme:
        print(readme_section(json.loads(RECORD.read_text())), end="")
        return 0
    if args.record and args.only:
        ap.error("--record writes README's source, a run of every case: not with --only")
    cases = {k: v for k, v in CASES.items() if k == "imports" or not args.only or any(s in k for s in args.only)}
    times: dict[str, list[float]] = {k: [] for k in cases}
    codes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "my_rope.py").write_text(MY_ROPE)
        for name, text in TWINS.items():
            (cwd / name).write_text(text)
        for name in ("implementations",):
            (cwd / name).symlink_to(ROOT / name)
        for example in ("multi_axis.py", "triton_rotary.py"):
            (cwd / example).symlink_to(ROOT / "examples" / example)
        for _ in range(args.repeats):
            for name, (argv, _) in cases.items():
                t, code = run((PY[:1] if argv[0] == "-c" else PY) + argv, cwd)
                times[name].append(t)
                codes[name] = code
                print(f"  {name}: {t:.2f} s (exit {code})", file=sys.stderr, flush=True)
            for tier, wanted, extra in (("pytest (README's test command, the fast tier)", args.pytest, []),
                                        ("pytest -m slow (the slow tier)", args.slow, ["-m", "slow"])):
                if wanted:
                    t, code = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], ROOT)
                    times.setdefault(tier, []).append(t)
                    codes[tier] = code
                    print(f"  {tier}: {t:.1f} s (exit {code})", file=sys.stderr, flush=True)
    imports = statistics.median(times["imports"])
    flags = (" --pytest" if args.pytest else "") + (" --slow" if args.slow else "")
    command = f"python benchmarks/verdict_time.py --repeats {args.repeats}{flags}{' --record' * args.record}"
    run_record = {"command": command, "date": date.today().isoformat(), "machine": machine(), "repeats": args.repeats,
                  "imports_s": round(imports, 2), "cases": {}, "ratios": []}
    print(f"`{command}`, {run_record['date']}, {run_record['machine']}; median of {args.repeats} fresh runs, wall "
          f"clock, imports included (imports alone: {imports:.2f} s):\n")
    print("| command | median | runs | exit | target |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        target = CASES.get(name, (None, 240.0 if name.startswith("pytest (") else None))[1]
        after = f" ({med - imports:.2f} s after imports)" if name in AFTER_IMPORTS else ""
        verdict = ""
        if target is not None:
            measured = med - imports if name in AFTER_IMPORTS else med
            verdict = f"{'met' if measured <= target else 'NOT met'} (<= {target:g} s)"
        print(f"| {name} | {med:.2f} s{after} | {', '.join(f'{t:.2f}' for t in ts)} | {codes[name]} | {verdict} |")
        run_record["cases"][name] = {"median_s": round(med, 2), "runs_s": [round(t, 2) for t in ts],
                                     "exit": codes[name], "target_s": target, "verdict": verdict}
    for name, against, most in RATIOS:
        if name in times and against in times:
            ratio = statistics.median(times[name]) / statistics.median(times[against])
            said = "" if most is None else f" ({'met' if ratio <= most else 'NOT met'}, <= {most:g}x)"
            print(f"\n{name} / {against}: {ratio:.2f}x{said}")
            run_record["ratios"].append({"case": name, "against": against, "ratio": round(ratio, 2), "at_most": most})
    if args.record:  # whole or not at all: written beside, then moved over the last record
        part = RECORD.with_suffix(".json.part")
        part.write_text(json.dumps(run_record, indent=1) + "\n")
        part.replace(RECORD)
        print(f"\nrecorded in {RECORD.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
