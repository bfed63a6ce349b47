"""thetas ignores its base argument and always uses 10000."""

from implementations.stdlib_lab import additive_score, pairs_within_first_turn, rotate_pair  # noqa: F401

FAULT = {"thetas": "base", "rope": "base", "rope_score": "base"}


def thetas(d, base=10000.0):
    return [10000.0 ** (-2.0 * i / d) for i in range(d // 2)]


def rope(vec, pos, base=10000.0):
    out = list(vec)
    for i, t in enumerate(thetas(len(vec), base)):
        out[2 * i], out[2 * i + 1] = rotate_pair(vec[2 * i], vec[2 * i + 1], pos * t)
    return out


def rope_score(q, k, m, n, base=10000.0):
    return sum(x * y for x, y in zip(rope(q, m, base), rope(k, n, base)))


def turns(delta, d, base=10000.0):
    import math

    return [delta * t / (2 * math.pi) for t in thetas(d, base)]
