"""ropespec: an executable specification and property-based verification suite for RoPE.

This package is the user-facing glue: the command line, the engine that runs the properties, and
reports. The specification lives in ``spec``, the exact reference in ``reference``, the plug-in
contract and implementations in ``implementations``, the properties in ``properties``.
"""

__version__ = "0.1.0"

from ropespec.api import CheckResult, check, fingerprint  # noqa: E402
from ropespec.spec import Expect, ExpectationError  # noqa: E402

__all__ = ["CheckResult", "Expect", "ExpectationError", "check", "fingerprint", "__version__"]
