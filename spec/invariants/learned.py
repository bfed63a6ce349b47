"""A learned absolute position table's invariants."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 20

INVARIANTS = [
    Invariant(
        "learned.in-range",
        "learned",
        "Every position below max_len answers with a finite row of the table.",
        source="GPT-2's learned table",
    ),
    Invariant(
        "learned.out-of-range-raises",
        "learned",
        "A position at or beyond max_len raises: never wraps, clamps or reads garbage.",
        source="nanochat PR #520, pegainfer #220; seed tutorial 000 (position 1088 raises)",
    ),
    Invariant(
        "learned.parameter-count",
        "learned",
        "The table holds max_len x d parameters.",
        source="seed tutorial 000 (1024 x 768 = 786432)",
    ),
]
