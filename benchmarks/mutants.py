"""Mutation testing on demand: does a small semantic change to the suite make some test fail?

    python benchmarks/mutants.py                 # every mutant, each against the tests that should kill it
    python benchmarks/mutants.py --full          # every mutant against the whole suite (slow)
    python benchmarks/mutants.py fast-no-g ...   # only these mutants

Each mutant is one textual replacement in one file (it must match exactly once), applied to a copy of the
working tree in a temporary folder; the tests then run in that copy (``python -m pytest -x``). A mutant is
killed when the tests fail. Not run in CI: it is how the suite's own tests are tested.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]  # what should kill it (pytest node ids or paths)
    why: str = ""


MUTANTS = [
    Mutant("assertions-bound-x10", "properties/assertions.py",
           "bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), got.shape)",
           "bound = 10 * np.broadcast_to(np.asarray(bound, dtype=np.float64), got.shape)",
           ("tests/test_tightness.py", "tests/test_zoo.py"), "every assertion's bound 10 times too loose"),
    Mutant("norm-bound-x10", "spec/tolerance.py",
           "return math.sqrt(2.0) * (atol(expect) + pair_norms * rotation_rtol(expect))",
           "return 10 * math.sqrt(2.0) * (atol(expect) + pair_norms * rotation_rtol(expect))",
           ("tests/test_tightness.py", "tests/test_zoo.py")),
    Mutant("same-angle-bound-x10", "spec/tolerance.py",
           "return atol(expect) + scale * K_ROT * unit_roundoff(expect.dtype)",
           "return atol(expect) + 10 * scale * K_ROT * unit_roundoff(expect.dtype)",
           ("tests/test_tightness.py", "tests/test_zoo.py")),
    Mutant("attention-floor-1e-3", "spec/tolerance.py",
           "    mean = (m + 4) * unit_roundoff(expect.dtype) * vmax",
           "    mean = 1e-3",
           ("tests/test_tightness.py", "tests/test_zoo.py"),
           "the issue's mutant of the old literal floor (1e-12 raised to 1e-3), on the derived term that replaced it"),
    Mutant("attention-bound-x10", "spec/tolerance.py",
           "    return float(min(2.0, math.expm1(min(2 * ds, 2.0))) * vmax + mean + atol(expect))",
           "    return 10 * float(min(2.0, math.expm1(min(2 * ds, 2.0))) * vmax + mean + atol(expect))",
           ("tests/test_tightness.py", "tests/test_zoo.py")),
    Mutant("component-bound-x1.85", "spec/tolerance.py",
           "return atol(expect) + pair_norms * (rotation_rtol(expect) + d_phi)",
           "return 1.85 * (atol(expect) + pair_norms * (rotation_rtol(expect) + d_phi))",
           ("tests/test_tolerance.py", "tests/test_tightness.py")),
    Mutant("scaling-frequency-tolerance-x10", "properties/test_scaling.py",
           "    return tolerance.angle_error(e, p, th)[0] / (p[0] * th) + tolerance.rotation_rtol(e) / (p[0] * th) + tolerance.PROBE_RTOL",
           "    return 10 * (tolerance.angle_error(e, p, th)[0] / (p[0] * th) + tolerance.rotation_rtol(e) / (p[0] * th) + tolerance.PROBE_RTOL)",
           ("tests/test_zoo.py",)),
    Mutant("sinusoidal-norm-bound-x10", "properties/test_sinusoidal.py",
           "    bound = np.sum(2 * (np.abs(y) + tau) * tau, axis=1) + e.head_dim * 2.0**-52",
           "    bound = 10 * (np.sum(2 * (np.abs(y) + tau) * tau, axis=1) + e.head_dim * 2.0**-52)",
           ("tests/test_zoo.py",)),
    Mutant("signature-not-proportional", "properties/precision.py",
           "and np.max(ratio[large]) >= 0.25 * np.max(ratio)", "and True",
           ("tests/test_diagnoses.py", "tests/test_zoo.py"), "a fixed-size error explained as a rounding of the angles"),
    Mutant("conformance-compares-with-itself", "properties/test_conformance.py",
           "    ref = reference.apply(e, x, pos)", "    ref = y",
           ("tests/test_zoo.py",), "the drawn-position conformance compared with the output itself"),
    Mutant("fast-no-attention-factor", "reference/fast.py",
           "    c, s = g * c, g * s\n    a, b", "    c, s = c, s\n    a, b",
           ("tests/test_accuracy.py",)),
    Mutant("fast-seq-len-off-by-one", "reference/fast.py",
           "hi, lo, g = theta_hi_lo(expect, int(positions.max()) + 1 if positions.size else None)",
           "hi, lo, g = theta_hi_lo(expect, int(positions.max()) if positions.size else None)",
           ("tests/test_accuracy.py",)),
    Mutant("torch-naive-float64-angle", "implementations/torch_rope.py",
           "        c, s = cos_sin(positions.to(torch.float64)[:, None], torch.from_numpy(hi).to(dev),\n"
           "                       torch.from_numpy(lo).to(dev), xp=torch)",
           "        ang = positions.to(torch.float64)[:, None] * torch.from_numpy(hi + lo).to(dev)\n"
           "        c, s = torch.cos(ang), torch.sin(ang)",
           ("tests/test_accuracy.py",)),
    Mutant("shape-finite-no-dtype-check", "properties/test_contract.py",
           "    if call.out_dtype != e.dtype:", "    if False:",
           ("tests/test_zoo.py",)),
    Mutant("composition-no-attention-factor", "properties/test_rotation.py",
           "    once[:, : e.rotary_dim] *= g", "    pass",
           ("properties/test_rotation.py", "tests/test_plain_functions.py")),
    Mutant("llama3-smoothing-reversed", "spec/scaling.py",
           "                out.append((1 - gamma) * t / f + gamma * t)",
           "                out.append(gamma * t / f + (1 - gamma) * t)",
           ("tests/test_reference.py", "tests/test_expectation.py")),
    Mutant("llama3-smoothing-denominator", "spec/scaling.py",
           "                gamma = (L / wavelen - lo) / (hi - lo)",
           "                gamma = (L / wavelen - lo) / hi",
           ("tests/test_reference.py", "tests/test_expectation.py")),
    Mutant("numpy-float32-angles", "implementations/numpy_rope.py",
           "        c, s = cos_sin(pos[:, None], hi, lo)",
           "        c, s = np.cos((pos[:, None] * (hi + lo)).astype(np.float32)), np.sin((pos[:, None] * (hi + lo)).astype(np.float32))",
           ("properties/test_conformance.py",), "properties/ must fail numpy computing float32 angles"),
]


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    for rel in files:
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def run(m: Mutant, full: bool) -> tuple[str, float, str]:
    with tempfile.TemporaryDirectory(prefix=f"mutant-{m.name}-") as tmp:
        dest = Path(tmp)
        _copy_tree(dest)
        path = dest / m.path
        text = path.read_text()
        if text.count(m.old) != 1:
            return "not applied", 0.0, f"the text to replace occurs {text.count(m.old)} times in {m.path}"
        path.write_text(text.replace(m.old, m.new))
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"] + ([] if full else list(m.tests))
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=dest, capture_output=True, text=True)
        seconds = time.perf_counter() - t
        tail = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED") or ln.startswith("ERROR")]
        return ("killed" if proc.returncode != 0 else "SURVIVED"), seconds, (tail[0] if tail else proc.stdout.splitlines()[-1:] and proc.stdout.splitlines()[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--full", action="store_true", help="run the whole suite against each mutant")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    survivors = 0
    print(f"{'mutant':<36} {'verdict':<12} {'s':>6}  evidence")
    for m in chosen:
        verdict, seconds, evidence = run(m, args.full)
        survivors += verdict != "killed"
        print(f"{m.name:<36} {verdict:<12} {seconds:6.0f}  {evidence}", flush=True)
    print(f"{len(chosen) - survivors} of {len(chosen)} killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
