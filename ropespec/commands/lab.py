"""``ropespec lab PATH`` (also ``ropespec check --module PATH``): grade the third tutorial's lab module."""

from __future__ import annotations

import argparse

from rich.console import Console

from ropespec.implementations.contract import TargetError
from ropespec import lab
from ropespec.commands import options
from ropespec.console import say
from ropespec.inputs import UsageError, check_seconds

NAME = "lab"


def add(sub) -> None:
    p = sub.add_parser(NAME, help="grade the tutorial's lab module (a file of standard-library functions)",
                       description="Import a lab module written with the standard library only and grade whichever of "
                                   f"{', '.join(lab.FUNCTIONS)} it defines, against values computed independently.")
    p.add_argument("module", metavar="PATH", help="the lab module's .py file")
    arguments(p)


def arguments(p: argparse.ArgumentParser) -> None:
    """The options the grader takes (also on ``check --module``)."""
    if not any(a.dest == "seed" for a in p._actions):
        p.add_argument("--seed", type=int, default=0, help="seed of the graded cases (default: 0)")
    if not any(a.dest == "json" for a in p._actions):
        p.add_argument("--json", metavar="PATH", help="write the grades as JSON")
    if not any(a.dest == "timeout" for a in p._actions):
        options.limits(p)


def run(args: argparse.Namespace, console: Console) -> int:
    if getattr(args, "targets", None):
        raise UsageError("--module grades a lab module: give no TARGET with it")
    outs = options.outputs(args, **{"--json": args.json})
    outs.clear()
    try:
        results = lab.grade(args.module, seed=args.seed or 0, timeout=check_seconds("--timeout", args.timeout),
                            warmup_timeout=check_seconds("--warmup-timeout", args.warmup_timeout))
    except TargetError as e:
        raise UsageError(f"--module {e}") from None
    say(console, f"ropespec check --module {args.module}: the lab's functions, graded")
    for r in results:
        word = f" [{r.diagnosis}]" if r.diagnosis else ""
        say(console, f"  {r.property:<24} {r.status:<5}{word} {r.message}".rstrip())
    passed = sum(r.status == "pass" for r in results)
    say(console, f"{passed} passed, {len(results) - passed} failed")
    unwritten = options.written(outs, "--json", options.json_text(
        {"passed": passed == len(results), "module": args.module, "results": [r.to_json() for r in results]}))
    return unwritten or (0 if passed == len(results) else 1)
