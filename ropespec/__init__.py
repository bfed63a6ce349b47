"""ropespec: an executable specification and property-based verification suite for RoPE.

This package is the user-facing glue: the command line, the engine that runs the properties, and
reports. The specification lives in ``spec``, the exact reference in ``reference``, the plug-in
contract and implementations in ``implementations``, the properties in ``properties``.

Its names (``check``, ``fingerprint``, ``CheckResult``, ``Expect``, ``ExpectationError``) load on first use (PEP 562):
importing any part of ropespec, its pytest plugin above all, which every pytest run where ropespec is installed
loads, pays nothing for the engine, the properties and Hypothesis until one of them is used.
"""

from __future__ import annotations

__version__ = "0.1.0"

_API = ("CheckResult", "check", "fingerprint")
_SPEC = ("Expect", "ExpectationError")

__all__ = ["CheckResult", "Expect", "ExpectationError", "check", "fingerprint", "__version__"]


def __getattr__(name: str):
    if name in _API:
        from ropespec import api as home
    elif name in _SPEC:
        from ropespec import spec as home
    else:
        raise AttributeError(f"module 'ropespec' has no attribute {name!r}")
    value = getattr(home, name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
