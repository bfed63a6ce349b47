"""A RoPE whose pass-through dims sit after its rotated ones where the expectation has them first (rotary_start
ignored): LTX-Video's padding put at the end."""

from ropespec.implementations.numpy_rope import make as make_rope

TARGETS = ("rope.partial-passthrough", "rope.conformance")
DIAGNOSIS = "rotary-dim"
SOURCE = ("not yet seen in a tracker: diffusers' LTXVideoRotaryPosEmbed pads its dim mod 6 dims ahead of the rotated "
          "ones (cos 1, sin 0 concatenated first); a port that pads them last")
EXPECT = {"head_dim": 16, "rotary_start": 2, "convention": "interleaved", "dtype": "float32"}


def make(expect):
    return make_rope(expect.replace(rotary_start=0))
