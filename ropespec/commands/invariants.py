"""``ropespec invariants``: every invariant of the registry with its statement."""

from __future__ import annotations

from rich.console import Console

from ropespec.console import say
from ropespec.request import InvariantsRequest
from ropespec.spec.invariants import REGISTRY

NAME = "invariants"


def add(sub) -> None:
    sub.add_parser(NAME, help="list the invariants with their statements",
                   description="List every invariant of the registry (spec/invariants/, a module per family) with its statement.")


def run(req: InvariantsRequest, console: Console) -> int:
    for inv in REGISTRY.values():
        say(console, f"{inv.id:<28} {inv.statement}")
    return 0
