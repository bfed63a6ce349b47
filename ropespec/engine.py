"""Running properties on implementations, serially, in this process (each implementation's code runs in its own
worker process): the engine behind ``ropespec check``, the Python API and the pytest plugin's rope_check."""

from __future__ import annotations

from typing import Callable

from ropespec.implementations.implementation import Implementation
from ropespec.properties.framework import Property, run_property, select_properties  # noqa: F401 (the engine's)
from ropespec.properties.results import Result
from ropespec.results import ImplementationReport
from ropespec.signals import raise_if_signalled


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
