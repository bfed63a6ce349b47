"""``ropespec spec``: the executable spec rendered (Markdown or one self-contained HTML file), with an
implementation's verdict per invariant when --impl is given."""

from __future__ import annotations

import sys

from rich.console import Console

from ropespec import specdoc
from ropespec.api import check
from ropespec.commands import options
from ropespec.console import say
from ropespec.request import SpecRequest

NAME = "spec"


def add(sub) -> None:
    SpecRequest.add_arguments(sub.add_parser(
        NAME, help="render the executable spec (Markdown or self-contained HTML)",
        description="Render every invariant with statement, formula, proof status, the properties that check it and "
                    "the zoo members that fail it, plus the tutorial facts. Exit codes: 0 rendered (with --impl: and "
                    "every verdict held); 1 with --impl, a verdict failed (the document is written all the same); 2 "
                    "bad usage."))


def run(req: SpecRequest, console: Console) -> int:
    outs = req.outputs(**{"--out": req.out})
    to_file = outs.get("--out") is not None and outs.get("--out").path is not None
    verdicts, impl = None, None
    if req.impl:
        result = check(req.impl, req.expect, array=req.array, dtype=req.dtype, seed=req.seed)
        verdicts = {}
        for r in result.results:
            if not r.applicable:
                continue
            word = r.status if r.status != "fail" else f"fail ({r.diagnosis})"
            verdicts[r.invariant] = word if verdicts.get(r.invariant, "pass") == "pass" else verdicts[r.invariant]
        impl = req.impl + (f" --expect {req.expect}" if req.expect else "")
    text = (specdoc.html_doc(verdicts, impl) if req.format == "html" else
            specdoc.markdown(verdicts, impl, specdoc.seeds_link(req.out if to_file else None)))
    # exit 0 means what it means for ropespec check: with --impl, that its every verdict held
    verdict = result.exit_code if req.impl else 0
    if not to_file:
        sys.stdout.write(text)
        return verdict
    code = options.written(outs, "--out", text)
    if not code:
        say(console, f"wrote {req.out}")
    return code or verdict
