"""The ``ropespec`` command line: the commands of :mod:`ropespec.commands`, their exit codes (0 everything holds,
1 an invariant fails, 2 bad usage, a bad expectation or a TARGET that cannot be loaded; 130 and 143 for Ctrl-C
and SIGTERM), and bad input said in one line."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

from ropespec import signals
from ropespec.commands import COMMANDS
from ropespec.console import console as console_for
from ropespec.inputs import UsageError
from ropespec.request import Request, parsed
from ropespec.spec.expectation import ExpectationError


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (no usage block): the field, what is wrong, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="ropespec",
                 description="Executable specification and property-based verification of RoPE implementations.")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add(sub)
    ap.commands = sub.choices  # each command's own parser, by name (its --help; the site's reference page)
    return ap


def main(argv: list[str] | None = None) -> int:
    try:
        req = parsed(parser(), argv)
    except UsageError as e:  # what the request itself says is wrong (-j 0), as every usage error: one line
        print(f"ropespec: error: {e}", file=sys.stderr)
        return 2
    with signals.handled():  # Ctrl-C and SIGTERM stop the run and print what finished
        return _run(req, console_for())


def _run(req: Request, console: Console) -> int:
    command = next(c for c in COMMANDS if c.NAME == req.COMMAND)
    try:
        return command.run(req, console)
    except ExpectationError as e:  # "expect" names the whole expectation, which --expect already says
        print(f"ropespec: error: --expect: {e.problem if e.field == 'expect' else e}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"ropespec: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        terminated = signals.terminated(e)
        print(f"ropespec: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130


if __name__ == "__main__":
    sys.exit(main())
