"""The third tutorial's lab, done with the standard library only (``math``): the module a grader
imports (``ropespec check --module implementations/stdlib_lab.py``).

Pairs are interleaved, (2i, 2i + 1), as in the RoFormer paper; the additive encoding is the paper's
sinusoidal one, sin at even and cos at odd dims.
"""

import math


def thetas(d, base=10000.0):
    """theta_i = base^(-2i/d) for i < d/2."""
    return [base ** (-2.0 * i / d) for i in range(d // 2)]


def rotate_pair(x0, x1, angle):
    """(x0, x1) turned counter-clockwise by ``angle`` radians."""
    c, s = math.cos(angle), math.sin(angle)
    return x0 * c - x1 * s, x0 * s + x1 * c


def rope(vec, pos, base=10000.0):
    """vec with pair (2i, 2i + 1) turned by pos * theta_i."""
    out = list(vec)
    for i, t in enumerate(thetas(len(vec), base)):
        out[2 * i], out[2 * i + 1] = rotate_pair(vec[2 * i], vec[2 * i + 1], pos * t)
    return out


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def rope_score(q, k, m, n, base=10000.0):
    """<rope(q, m), rope(k, n)>: depends on n - m only."""
    return _dot(rope(q, m, base), rope(k, n, base))


def _pe(pos, d, base):
    out = []
    for t in thetas(d, base):
        out += [math.sin(pos * t), math.cos(pos * t)]
    return out


def additive_score(q, k, m, n, base=10000.0):
    """(q + PE(m)) . (k + PE(n)) with the sinusoidal PE: varies with m at a fixed gap n - m."""
    d = len(q)
    return _dot([a + b for a, b in zip(q, _pe(m, d, base))], [a + b for a, b in zip(k, _pe(n, d, base))])


def turns(delta, d, base=10000.0):
    """How many full turns each pair makes over a gap of ``delta`` positions."""
    return [delta * t / (2 * math.pi) for t in thetas(d, base)]


def pairs_within_first_turn(delta, d, base=10000.0):
    """How many pairs have not completed one turn over a gap of ``delta``."""
    return sum(1 for t in turns(delta, d, base) if t < 1)
