"""The zoo: known-buggy implementations, each modelled on a real bug.

Each member is a module here with a factory ``make(expect)``, ``TARGETS`` (the invariant ids it
must fail), ``DIAGNOSIS`` (the word a correct diagnosis names) and ``SOURCE`` (where the bug was
seen). Its docstring's first line says what it does wrong.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Member:
    name: str
    target: str
    description: str
    targets: tuple[str, ...]
    diagnosis: str
    source: str


def members() -> list[Member]:
    """Every zoo member, by name."""
    out = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        out.append(
            Member(
                name=info.name,
                target=f"{__name__}.{info.name}:make",
                description=(mod.__doc__ or "").strip().splitlines()[0],
                targets=tuple(mod.TARGETS),
                diagnosis=mod.DIAGNOSIS,
                source=mod.SOURCE,
            )
        )
    return out
