"""Resumes after a vision block at the token count, not one past the largest position."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.resume",)
DIAGNOSIS = "resume-offset"
SOURCE = "Qwen2-VL's get_rope_index (st_idx = max + 1, not the token count); mlx-vlm #1282"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, resume="count")
