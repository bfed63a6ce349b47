"""Known-buggy variants of the tutorial's lab module (implementations/stdlib_lab.py), for the grader.
Each module's docstring says its fault; ``FAULT`` maps the function that is wrong to the diagnosis
the grader must name (None: the function is missing)."""


def build(rotate_pair, thetas):
    """The lab's rope, rope_score and turns built on the given rotate_pair and thetas, so that a
    variant changes one function and inherits the rest."""
    import math

    def rope(vec, pos, base=10000.0):
        out = list(vec)
        for i, t in enumerate(thetas(len(vec), base)):
            out[2 * i], out[2 * i + 1] = rotate_pair(vec[2 * i], vec[2 * i + 1], pos * t)
        return out

    def rope_score(q, k, m, n, base=10000.0):
        return sum(x * y for x, y in zip(rope(q, m, base), rope(k, n, base)))

    def turns(delta, d, base=10000.0):
        return [delta * t / (2 * math.pi) for t in thetas(d, base)]

    return rope, rope_score, turns
