"""A decoder whose step rotates the new query and key with the table's first row (position 0)."""

from ropespec.implementations.attention_decode import Decoder

TARGETS = ("decode.attention-consistency",)
DIAGNOSIS = "position-offset"
SOURCE = "executorch PR #2010 (frequencies not sliced to start_pos)"
FAMILY = "attention"
EXPECT = {"head_dim": 16, "max_position": 8192, "dtype": "float64"}


class NotSliced(Decoder):
    def step(self, q, k, v, position):
        return super().step(q, k, v, 0)  # the bug: freqs[0] instead of freqs[start_pos]


def make(expect):
    return NotSliced(expect)
