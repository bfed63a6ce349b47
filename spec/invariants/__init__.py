"""The invariant registry: every invariant the suite checks, stated once.

One module of this package per family states its invariants (``INVARIANTS``) and where they stand (``ORDER``); the
registry is every module's, found as the scaling methods and the zoo are (each module imported), in that order.

Each entry has a stable id (scripts and reports depend on it), the spec section it belongs to
(properties/test_<section>.py checks it), a one-sentence statement and where it comes from. Everything else about
an invariant is declared by its owner and names the id: its proof (``ropespec.spec.proofs``), the properties that check it
and the tolerance rule they apply (``properties``), the forms that answer it (``ropespec.implementations.families``), the zoo
members that fail it (``ropespec.implementations.zoo``); ``ropespec.properties.facts`` gathers them into one record.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Invariant:
    id: str
    section: str
    statement: str
    #: where it comes from: the paper, the seed tutorials (shared/seeds), or the public bug reports and code that
    #: motivated checking it
    source: str = ""
    #: a documented non-invariant: why every implementation of its families is expected to fail it
    expected_to_fail: str = ""


#: id -> the invariant, every module of this package's, in ORDER then as each module lists them
REGISTRY: dict[str, Invariant] = {}


def _discover() -> None:
    modules = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
               if not info.name.startswith("_")]
    for module in sorted(modules, key=lambda m: (m.ORDER, m.__name__)):
        for inv in module.INVARIANTS:
            if inv.id in REGISTRY:
                raise ValueError(f"invariant {inv.id!r} stated twice")
            REGISTRY[inv.id] = inv


def get(invariant_id: str) -> Invariant:
    try:
        return REGISTRY[invariant_id]
    except KeyError:
        raise KeyError(f"unknown invariant {invariant_id!r} (known: {', '.join(REGISTRY)})") from None


_discover()
#: the spec's sections, in the order their first invariant stands
SECTIONS = tuple(dict.fromkeys(inv.section for inv in REGISTRY.values()))
