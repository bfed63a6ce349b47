"""``ropespec golden``: inputs and exact outputs at chosen positions, as hex floats, for tests in any language."""

from __future__ import annotations


from rich.console import Console

from ropespec.reference import golden
from ropespec.commands import options
from ropespec.console import say
from ropespec.inputs import UsageError, parse_expect, with_rope
from ropespec.request import GoldenRequest
from ropespec.spec.expectation import MAX_POSITION_MAX

NAME = "golden"


def add(sub) -> None:
    GoldenRequest.add_arguments(sub.add_parser(
        NAME, help="write inputs and exact outputs at chosen positions (for tests in any language)",
        description="Write a golden file: inputs (exact in bfloat16) and the exact outputs rounded correctly to "
                    "float64, float32 and bfloat16, as hex floats (format: docs/howto/precision.md)."))


def run(req: GoldenRequest, console: Console) -> int:
    expect = parse_expect(req.expect)
    with_rope(expect, "rope", "golden data")
    outs = req.outputs(**{"--out": req.out})
    try:
        positions = [int(p) for p in req.positions.split(",") if p.strip()]
    except ValueError:
        raise UsageError(f"--positions: expected comma-separated integers, got {req.positions!r}") from None
    if not positions or min(positions) < 0 or max(positions) >= MAX_POSITION_MAX:
        raise UsageError(f"--positions: expected integers in [0, 2^53 = {MAX_POSITION_MAX}), got {req.positions!r}")
    code = options.written(outs, "--out", golden.text(golden.make(expect, positions, seed=req.seed)))
    if not code and outs.get("--out").path is not None:
        say(console, f"wrote {len(positions)} rows of {expect.describe()} to {req.out}")
    return code
