"""rope pairs dim i with dim i + d/2 (the HF layout) where the lab asks for interleaved pairs."""

from ropespec.implementations.stdlib_lab import additive_score, pairs_within_first_turn, rotate_pair, thetas, turns  # noqa: F401

FAULT = {"rope": "convention", "rope_score": "convention"}


def rope(vec, pos, base=10000.0):
    d = len(vec)
    out = list(vec)
    for i, t in enumerate(thetas(d, base)):
        out[i], out[i + d // 2] = rotate_pair(vec[i], vec[i + d // 2], pos * t)
    return out


def rope_score(q, k, m, n, base=10000.0):
    a, b = rope(q, m, base), rope(k, n, base)
    return sum(x * y for x, y in zip(a, b))
