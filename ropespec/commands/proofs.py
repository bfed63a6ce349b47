"""``ropespec proofs``: every proof of the spec run, each proven one audited under its mutations
(:func:`ropespec.spec.proofs.audit`), and optionally recorded for ``ropespec spec`` to render."""

from __future__ import annotations

import datetime
import json
import subprocess
import time
from pathlib import Path

from rich.console import Console

from ropespec.commands import options
from ropespec.inputs import UsageError
from ropespec.request import ProofsRequest

NAME = "proofs"
ROOT = Path(__file__).resolve().parents[2]


def add(sub) -> None:
    ProofsRequest.add_arguments(sub.add_parser(
        NAME, help="run every proof of the spec: kind, result, time, mutations it fails under",
        description="Run every proof in spec/proofs/ on the code's own definitions, and each proven one under the "
                    "mutations of what it is about (it must fail under every one). Prints invariant, kind, result, "
                    "seconds and mutations failed; exit 0 when every proof verifies and fails under all its mutations, "
                    "1 otherwise."))


def run(req: ProofsRequest, console: Console) -> int:
    import sympy  # 0.5 s to import: only this command runs it (the spec renders its record)

    from ropespec.spec import formulas, proofs

    if req.record and req.no_mutants:
        raise UsageError("--record: run with the mutations (drop --no-mutants), the record states them")
    unknown = [i for i in req.ids if i not in proofs.ALL]
    if unknown:
        raise UsageError(f"INVARIANT: {unknown[0]!r} has no entry in spec/proofs/ (ropespec invariants lists the ids)")
    if req.record and req.ids:
        raise UsageError("--record: the record states every proof; drop the INVARIANT ids")
    outs = req.outputs(**{"--record": req.record})  # checked before the proofs run; whole or absent
    t0 = time.perf_counter()
    results, failed = {}, 0
    print(f"{'proof':<36} {'kind':<18} {'result':<9} {'seconds':>7}  mutations failed under")
    for o in proofs.run_all(req.ids or None):
        pr = proofs.ALL[o.id]
        if not req.no_mutants:
            proofs.audit(o)
        result = ("verified" if o.ok else "FAILED") if pr.fn is not None else "-"
        failed += not o.ok
        muts = f"{o.killed[0]}/{o.killed[1]}" if o.killed else ("-" if pr.fn is None or req.no_mutants else "")
        print(f"{o.id:<36} {o.kind:<18} {result:<9} {o.seconds:7.2f}  {muts}", flush=True)
        if not o.ok:
            print(f"    {o.account}")
        results[o.id] = {**o.to_json(), "proven": pr.fn is not None}
    total = time.perf_counter() - t0
    proven = sum(1 for pid in results if proofs.ALL[pid].fn is not None)
    print(f"{len(results)} entries, {proven} proofs: {proven - failed} verified, {failed} failed; "
          f"{len(results) - proven} definition or tested only; {total:.1f} s")
    if req.record:
        record = {"verified_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "commit": _git_commit(), "sympy": sympy.__version__, "seconds": round(total, 1), "results": results,
                  "formulas": formulas.printed()}  # what ropespec spec shows, printed by sympy (ropespec.specdoc)
        if options.written(outs, "--record", json.dumps(record, indent=1, ensure_ascii=False) + "\n"):
            return 2
        print(f"wrote {req.record}")
    return 1 if failed else 0


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "spec"], cwd=ROOT, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (" with uncommitted changes to spec/" if dirty else "")
