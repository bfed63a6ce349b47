"""``ropespec golden``: inputs and exact outputs at chosen positions, as hex floats, for tests in any language."""

from __future__ import annotations

import argparse

from rich.console import Console

from ropespec.reference import golden
from ropespec.commands import options
from ropespec.console import say
from ropespec.inputs import UsageError, parse_expect, with_rope
from ropespec.spec.expectation import MAX_POSITION_MAX

NAME = "golden"


def add(sub) -> None:
    p = sub.add_parser(NAME, help="write inputs and exact outputs at chosen positions (for tests in any language)",
                       description="Write a golden file: inputs (exact in bfloat16) and the exact outputs rounded "
                                   "correctly to float64, float32 and bfloat16, as hex floats (format: docs/howto/precision.md).")
    options.expect(p, required=True)
    p.add_argument("--positions", required=True, metavar="LIST", help="comma-separated positions, e.g. 1,999,65521")
    p.add_argument("--seed", type=int, default=0, help="seed of the input vectors (default: 0)")
    p.add_argument("--out", required=True, metavar="FILE", help="where to write the JSON (- for standard output)")


def run(args: argparse.Namespace, console: Console) -> int:
    expect = parse_expect(args.expect)
    with_rope(expect, "rope", "golden data")
    outs = options.outputs(args, **{"--out": args.out})
    try:
        positions = [int(p) for p in args.positions.split(",") if p.strip()]
    except ValueError:
        raise UsageError(f"--positions: expected comma-separated integers, got {args.positions!r}") from None
    if not positions or min(positions) < 0 or max(positions) >= MAX_POSITION_MAX:
        raise UsageError(f"--positions: expected integers in [0, 2^53 = {MAX_POSITION_MAX}), got {args.positions!r}")
    code = options.written(outs, "--out", golden.text(golden.make(expect, positions, seed=args.seed)))
    if not code and outs.get("--out").path is not None:
        say(console, f"wrote {len(positions)} rows of {expect.describe()} to {args.out}")
    return code
