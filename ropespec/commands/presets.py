"""``ropespec presets``: the model presets --expect accepts."""

from __future__ import annotations

from rich.console import Console

from ropespec.console import say
from ropespec.request import PresetsRequest
from ropespec.spec import presets

NAME = "presets"


def add(sub) -> None:
    sub.add_parser(NAME, help="list the model presets --expect accepts",
                   description="List the model presets that --expect accepts, with their expectations.")


def run(req: PresetsRequest, console: Console) -> int:
    for name in presets.names():
        e = presets.get(name)
        line = f"{name:<16} {e.describe()}, max_position {e.max_position}"
        if e.rope_scaling:
            extra = {k: v for k, v in e.to_dict()["rope_scaling"].items() if k != "rope_type"}
            line += f" {extra}"
        if name in presets.NOTES:
            line += f"  ({presets.NOTES[name]})"
        if name in presets.UNVERIFIED:
            line += f"  [unverified: {presets.UNVERIFIED[name]}]"
        say(console, line)
    return 0
