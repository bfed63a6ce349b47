"""spec: what a positional encoding IS — the expectation schema, the invariant registry and the
tolerance model. Imports no other layer of ropespec."""

from ropespec.spec.expectation import DEFAULT, Expect, ExpectationError

__all__ = ["DEFAULT", "Expect", "ExpectationError"]
