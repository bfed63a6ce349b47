"""Qwen3.5's vision rotary built over the whole head (each axis's ladder theta^(-2k/72)) where it is over half of it."""

from ropespec.implementations.zoo._axes import build
from ropespec.spec import presets

TARGETS = ("rope.conformance", "axes.one-axis")
DIAGNOSIS = "base"
SOURCE = ("not yet seen in a tracker: Qwen3_5VisionRotaryEmbedding(head_dim) where the vision tower builds it with "
          "head_dim // 2; each axis's ladder theta^(-2k/72) is the ladder theta'^(-2k/36) of the base theta' = "
          "theta^(1/2), what the frequencies measure")
EXPECT = presets.get("qwen3.5-vision").to_dict()


def _head_dim_ladder(e):
    seen: dict[int, int] = {}
    out = []
    for a in e.pair_axes():
        out.append((seen.get(a, 0), e.head_dim))
        seen[a] = seen.get(a, 0) + 1
    return tuple(out)


def make(expect):
    return build(expect, ladder=_head_dim_ladder)
