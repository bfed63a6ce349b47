"""A lab handed in half done: no rope_score, additive_score, turns or pairs_within_first_turn."""

from ropespec.implementations.stdlib_lab import rope, rotate_pair, thetas  # noqa: F401

FAULT = {"rope_score": None, "additive_score": None, "turns": None, "pairs_within_first_turn": None}
