"""The console commands print to: rich's, whose reader may go away (``| head -1``)."""

from __future__ import annotations

import os
import sys

from rich.console import Console


class GuardedConsole(Console):
    """A console whose reader may go away: the rest of the text goes nowhere, and the command goes on to its
    reports and its verdict's exit code (rich's own handling ends the process with exit 1, "an invariant
    failed")."""

    closed = False

    def on_broken_pipe(self) -> None:
        self.quiet = True
        GuardedConsole.closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
        except (OSError, ValueError, AttributeError):
            pass


def console(to_stderr: bool = False) -> GuardedConsole:
    """The console a command prints its text to: standard output, or standard error when a report file goes to
    standard output. Emoji are off: ":llama:" in a TARGET is not an emoji."""
    return GuardedConsole(file=sys.stderr if to_stderr else None, soft_wrap=True, emoji=False)


def say(console: Console, text: str) -> None:
    """One line of plain text (no markup, no highlighting: '[layout]' in a message is text)."""
    console.print(text, highlight=False, markup=False)


def one_destination(console: Console) -> bool:
    """Whether the console's text and standard error reach one place (``2>&1`` into a file or a pipe): the same open
    file, as the operating system says. A line on standard error that summarises what the report will say would
    then land above the report it summarises."""
    try:
        a, b = os.fstat(console.file.fileno()), os.fstat(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
