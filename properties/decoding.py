"""What a decoding step did, read off its output: the one position whose exact rotation it is (a step's key, or a
step's query and key through attention), and that position in words against the one due. Read by the decode
properties of every family that decodes."""

from __future__ import annotations

import numpy as np

from ropespec.properties.numerics import exact, output_bound


def offset_words(at: int, due: int) -> str:
    """What a step's position ``at`` where ``due`` is due reads as: 0 a position never advanced, one early the offset
    read before it is advanced, one late the offset advanced twice, else how far off; each that fits, in words."""
    said = [what for fits, what in ((at == 0, "never advanced"),
                                    (at == due - 1, "one position early: the offset read before it is advanced"),
                                    (at == due + 1, "one position late: the offset advanced twice")) if fits]
    return ", or ".join(said) if said else f"{at - due:+d} from its own"


#: the positions a key's position is read among: every one up to this many (2^17 rows, in chunks)
READ_MAX, _READ_CHUNK = 1 << 17, 8192


def read_position(e, x_row, y_row, t: int) -> int | None:
    """The one position p whose exact rotation of ``x_row`` ``y_row`` is within the bound of: every position below
    READ_MAX and max_position, where the table does not change with the length; for a length-dependent table (whose
    rotation at p depends on the length t + 1 too) 0, t - 1 and t + 1 only. None where none fits or several do: a
    position is said only where the measurement tells it from every other."""
    if e.method.length_dependent:
        candidates = np.array([p for p in (0, t - 1, t + 1) if 0 <= p < e.max_position], dtype=np.int64)
        chunks = [candidates]
    else:
        top = min(e.max_position, READ_MAX)
        chunks = [np.arange(a, min(a + _READ_CHUNK, top), dtype=np.int64) for a in range(0, top, _READ_CHUNK)]
    fits: list[int] = []
    for cand in chunks:
        xs = np.repeat(np.asarray(x_row, dtype=np.float64)[None, :], len(cand), axis=0)
        if e.method.length_dependent:  # each candidate at the step's own length
            want = np.concatenate([exact(e, xs[i : i + 1], np.array([p]))[0] for i, p in enumerate(cand)])
            own = np.zeros_like(want)
            bound = np.concatenate([output_bound(e, xs[i : i + 1], np.array([p])) for i, p in enumerate(cand)])
        else:
            want, own = exact(e, xs, cand, fast=True)
            bound = output_bound(e, xs, cand)
        ok = np.all(np.abs(np.asarray(y_row)[None, :] - want) <= bound + own, axis=1)
        fits.extend(int(p) for p in cand[ok])
        if len(fits) > 1:
            return None
    return fits[0] if len(fits) == 1 else None
