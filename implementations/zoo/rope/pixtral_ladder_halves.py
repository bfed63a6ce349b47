"""Pixtral's 2-D RoPE with h on the first half of the ladder and w on the second, where h takes its even indices."""

from ropespec.implementations.zoo._axes import build
from ropespec.spec import presets

TARGETS = ("rope.conformance",)
DIAGNOSIS = "ladder-shared"
SOURCE = ("not yet seen in a tracker: PixtralRotaryEmbedding's freqs[::2] (h) and freqs[1::2] (w) read as "
          "freqs[:n/2] and freqs[n/2:], one ladder theta^(-2j/64) dealt in pair order")
EXPECT = presets.get("pixtral-12b").to_dict()


def make(expect):
    return build(expect, ladder=lambda e: tuple((j, e.rotary_dim) for j in range(e.n_pairs)))
