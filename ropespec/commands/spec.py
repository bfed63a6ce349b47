"""``ropespec spec``: the executable spec rendered (Markdown or one self-contained HTML file), with an
implementation's verdict per invariant when --impl is given."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

from ropespec import specdoc
from ropespec.api import check
from ropespec.commands import options
from ropespec.console import say

NAME = "spec"


def add(sub) -> None:
    p = sub.add_parser(NAME, help="render the executable spec (Markdown or self-contained HTML)",
                       description="Render every invariant with statement, formula, proof status, the properties "
                                   "that check it and the zoo members that fail it, plus the tutorial facts. Exit codes: "
                                   "0 rendered (with --impl: and every verdict held); 1 with --impl, a verdict "
                                   "failed (the document is written all the same); 2 bad usage.")
    p.add_argument("--format", choices=("md", "html"), default="md")
    p.add_argument("--impl", metavar="TARGET", help="also show this implementation's verdict per invariant")
    options.expect(p)
    options.array(p)
    options.dtype(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the --impl check (default: 0)")
    p.add_argument("--out", metavar="PATH", help="write here instead of standard output")


def run(args: argparse.Namespace, console: Console) -> int:
    outs = options.outputs(args, **{"--out": args.out})
    to_file = outs.get("--out") is not None and outs.get("--out").path is not None
    verdicts, impl = None, None
    if args.impl:
        result = check(args.impl, args.expect, array=args.array, dtype=args.dtype, seed=args.seed)
        verdicts = {}
        for r in result.results:
            if not r.applicable:
                continue
            word = r.status if r.status != "fail" else f"fail ({r.diagnosis})"
            verdicts[r.invariant] = word if verdicts.get(r.invariant, "pass") == "pass" else verdicts[r.invariant]
        impl = args.impl + (f" --expect {args.expect}" if args.expect else "")
    text = (specdoc.html_doc(verdicts, impl) if args.format == "html" else
            specdoc.markdown(verdicts, impl, specdoc.seeds_link(args.out if to_file else None)))
    # exit 0 means what it means for ropespec check: with --impl, that its every verdict held
    verdict = result.exit_code if args.impl else 0
    if not to_file:
        sys.stdout.write(text)
        return verdict
    code = options.written(outs, "--out", text)
    if not code:
        say(console, f"wrote {args.out}")
    return code or verdict
