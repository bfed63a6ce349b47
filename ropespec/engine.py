"""Running properties on implementations, serially, in this process (each implementation's code runs in its own
worker process): the engine behind ``ropespec check``, the Python API and the pytest plugin's rope_check."""

from __future__ import annotations

from typing import Callable

from ropespec.implementations.implementation import Implementation
from ropespec.properties.framework import all_properties, Property, run_property
from ropespec.properties.results import Result
from ropespec.results import ImplementationReport
from ropespec.signals import raise_if_signalled


def select_properties(invariant_ids: list[str] | None = None) -> list[Property]:
    """The properties of these invariants; ``ID:property`` picks one property of an invariant that has
    several (``rope.conformance:large_positions``), as replay commands do."""
    props = all_properties()
    if invariant_ids:
        known = {p.invariant for p in props} | {f"{p.invariant}:{p.name}" for p in props}
        unknown = [i for i in invariant_ids if i not in known]
        if unknown:
            raise ValueError(f"--invariant: unknown {', '.join(unknown)} (known: "
                             f"{', '.join(sorted({p.invariant for p in props}))}; "
                             f"ID:property picks one property)")
        props = [p for p in props if p.invariant in invariant_ids or f"{p.invariant}:{p.name}" in invariant_ids]
    return props


def check_implementations(
    impls: list[Implementation],
    properties: list[Property],
    *,
    profile: str,
    seed: int,
    replay: tuple[str, str] | None = None,
    on_result: Callable[[Result], None] | None = None,
    on_implementation: Callable[[ImplementationReport], None] | None = None,
    on_progress: Callable[[str, str, str, float], None] | None = None,
    into: list[ImplementationReport] | None = None,
) -> list[ImplementationReport]:
    """Run ``properties`` on each implementation in turn, stopping each implementation's worker when it is done.
    Reports are appended to ``into`` as they start, so an interrupted run keeps what finished.
    ``on_progress(implementation, invariant, text, seconds)``: how far a running property has got
    (:func:`ropespec.properties.framework.progress`)."""
    reports = into if into is not None else []
    for s in impls:
        rep = ImplementationReport(s)
        reports.append(rep)
        try:
            for p in properties:
                r = run_property(p, s, profile=profile, seed_value=seed, replay=replay, on_progress=on_progress,
                                 should_stop=raise_if_signalled)
                rep.results.append(r)
                if on_result:
                    on_result(r)
        finally:
            s.close()
        if on_implementation:
            on_implementation(rep)
    return reports
