"""The ``ropespec`` command line. Exit codes: 0 everything holds, 1 an invariant fails,
2 bad usage, a bad expectation or a TARGET that cannot be loaded."""

from __future__ import annotations

import argparse
import random
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from properties.profiles import DEFAULT_PROFILE, PROFILES
from ropespec import api, report
from ropespec.inputs import UsageError, build_subjects, parse_expect
from spec.expectation import DTYPES, ExpectationError


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="ropespec",
        description="Executable specification and property-based verification of RoPE implementations.",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    c = sub.add_parser("check", help="check implementations against every invariant",
                       description="Check TARGETs (default: the shipped implementations) against every invariant.")
    c.add_argument("targets", nargs="*", metavar="TARGET",
                   help="path/to/file.py:name or package.module:name; a function f(x, positions) or a factory make(expect)")
    c.add_argument("--expect", metavar="JSON", help="the expectation: inline JSON or a JSON file (default: drawn for factories)")
    c.add_argument("--array", choices=("numpy", "torch", "list"), help="how x is handed to TARGET (default: numpy)")
    c.add_argument("--dtype", choices=DTYPES, help="dtype of x and of the output (default: the expectation's, float32)")
    c.add_argument("--max-position", type=int, metavar="N", help="largest position tested is N-1 (default: 131072)")
    c.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help=f"hypothesis profile (default: {DEFAULT_PROFILE})")
    c.add_argument("--seed", type=int, help="seed for a reproducible run (default: random, printed)")
    c.add_argument("--invariant", action="append", metavar="ID", help="check only this invariant (repeatable)")
    c.add_argument("--replay", metavar="VERSION:BLOB", help="replay one failing case printed by an earlier run")
    c.add_argument("--device", default="cpu", help="torch device for --array torch (default: cpu)")
    c.add_argument("--json", metavar="PATH", help="write the results as JSON (schema in README)")
    return ap


def _check(args: argparse.Namespace, console: Console) -> int:
    expect = parse_expect(args.expect)
    subjects = build_subjects(args.targets, expect=expect, array=args.array, dtype=args.dtype,
                              max_position=args.max_position, device=args.device)
    try:
        props = api.select_properties(args.invariant)
    except ValueError as e:
        raise UsageError(str(e)) from None
    replay = None
    if args.replay:
        version, sep, blob = args.replay.partition(":")
        if not sep or not blob:
            raise UsageError(f"--replay: expected VERSION:BLOB as printed by a failing run, got {args.replay!r}")
        replay = (version, blob)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    total = len(subjects) * len(props)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("checking", total=total)
        reports = api.check_subjects(
            subjects, props, profile=args.profile, seed=seed, replay=replay,
            on_result=lambda r: progress.update(task, advance=1, description=f"{r.implementation} {r.invariant}"),
        )
    report.render(reports, console, seed=seed, profile=args.profile)
    if args.json:
        report.write_json(args.json, reports, seed=seed, profile=args.profile)
    return 0 if all(rep.passed for rep in reports) else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console(soft_wrap=True)
    try:
        if args.command == "check":
            return _check(args, console)
    except ExpectationError as e:
        print(f"ropespec: error: --expect: {e}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"ropespec: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ropespec: interrupted", file=sys.stderr)
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
