"""``ropespec lab PATH`` (also ``ropespec check --module PATH``): grade the third tutorial's lab module."""

from __future__ import annotations

from rich.console import Console

from ropespec.implementations.contract import TargetError
from ropespec import lab
from ropespec.commands import options
from ropespec.console import say
from ropespec.inputs import UsageError, check_seconds
from ropespec.request import LabRequest

NAME = "lab"


def add(sub) -> None:
    LabRequest.add_arguments(sub.add_parser(
        NAME, help="grade the tutorial's lab module (a file of standard-library functions)",
        description="Import a lab module written with the standard library only and grade whichever of "
                    f"{', '.join(lab.FUNCTIONS)} it defines, against values computed independently."))


def run(req: LabRequest, console: Console) -> int:
    outs = req.outputs(**{"--json": req.json})
    outs.clear()
    try:
        results = lab.grade(req.module, seed=req.seed or 0, timeout=check_seconds("--timeout", req.timeout),
                            warmup_timeout=check_seconds("--warmup-timeout", req.warmup_timeout))
    except TargetError as e:
        raise UsageError(f"--module {e}") from None
    say(console, f"ropespec check --module {req.module}: the lab's functions, graded")
    for r in results:
        word = f" [{r.diagnosis}]" if r.diagnosis else ""
        say(console, f"  {r.property:<24} {r.status:<5}{word} {r.message}".rstrip())
    passed = sum(r.status == "pass" for r in results)
    say(console, f"{passed} passed, {len(results) - passed} failed")
    unwritten = options.written(outs, "--json", options.json_text(
        {"passed": passed == len(results), "module": req.module, "results": [r.to_json() for r in results]}))
    return unwritten or (0 if passed == len(results) else 1)
