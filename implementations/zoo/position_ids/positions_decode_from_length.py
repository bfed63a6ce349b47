"""Continues decoding at the prompt's length, dropping rope_deltas."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.decode",)
DIAGNOSIS = "decode-restart"
SOURCE = "transformers' compute_3d_position_ids (rope_deltas carry decode past the vision blocks' compression)"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, next_at_length=True)
