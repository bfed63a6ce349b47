"""implementations: what is UNDER TEST — the plug-in contract, the call shape and the families' forms, the loader and
the process boundary, the shipped implementations, adapters, and ``zoo/`` (known-buggy implementations).

Imports ``spec`` and nothing else of ropespec. Its modules import each other by their own names, never through this
package, which only gathers the public names.
"""

from __future__ import annotations

from ropespec.implementations import arrays
from ropespec.implementations.contract import (
    DEFAULT_TIMEOUT,
    DEFAULT_WARMUP_TIMEOUT,
    FATAL,
    Call,
    Failure,
    Fault,
    TargetError,
    Unsupported,
)
from ropespec.implementations.families import Bound
from ropespec.implementations.implementation import Implementation
from ropespec.implementations.loader import (LoadRequest, default_memory_limit, load_implementation, reference_of,
                                             unavailable)
from ropespec.implementations.shape import CallShape
from ropespec.implementations.shipped import SHIPPED, Shipped

__all__ = [
    "SHIPPED",
    "LoadRequest",
    "arrays",
    "Bound",
    "Call",
    "CallShape",
    "DEFAULT_TIMEOUT",
    "DEFAULT_WARMUP_TIMEOUT",
    "FATAL",
    "Failure",
    "Fault",
    "Shipped",
    "Implementation",
    "TargetError",
    "Unsupported",
    "default_memory_limit",
    "load_implementation",
    "unavailable",
    "reference_of",
]
