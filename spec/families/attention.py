from ropespec.spec.families import Family


class Attention(Family):
    name = "attention"
    means = "attention whose scores use RoPE'd q and k (grouped-query heads)"
    order = 30
