from ropespec.spec.families import Family
from ropespec.spec.params.attention import AttentionParams


class Attention(Family):
    name = "attention"
    means = "attention whose scores use RoPE'd q and k (grouped-query heads)"
    order = 30
    params = AttentionParams
