"""Every position, exhaustively (``ropespec precision --exhaustive``): each position below n rotated once and
compared with the exact reference in chunks, the worst error of each tolerance class kept with the position where it
occurs, and the first position where each class fails; on numpy arrays, or on torch tensors on a device."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ropespec import reference
from ropespec.properties.precision import CLASSES, along_axes, class_of, saturated_ratio, with_class
from ropespec.reference import fast
from ropespec.spec import tolerance
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect


@dataclass
class Exhaustive:
    """Every position 0 .. n-1, one random vector each, against ``ropespec.reference.fast``: per class the first
    position where the class's bound (plus the reference's own 2-ulp error) is exceeded, and the worst
    ratio with its position; the largest error relative to the pair norm with its position."""

    expect: Expect
    n: int
    first_failure: dict[str, int | None]
    worst: dict[str, tuple[float, int]]
    max_error: tuple[float, int]
    nonfinite_at: int | None
    reference_error: float = tolerance.FAST_REFERENCE_ERROR
    #: per class the first position where its bound is saturated (it promises nothing from there), None: nowhere
    saturated_from: dict[str, int | None] = field(default_factory=dict)

    def promises_until(self, cls: str) -> int | None:
        """The last position before class ``cls``'s bound saturates (None: it never does below n), as the sweep's."""
        at = self.saturated_from.get(cls)
        return None if at is None else max(at - 1, 0)

    def to_json(self) -> dict:
        return {"expect": self.expect.to_dict(), "positions": self.n, "reference": "ropespec.reference.fast",
                "reference_error": self.reference_error, "first_failure": self.first_failure,
                "promises_until": {c: self.promises_until(c) for c in self.first_failure},
                "worst": {c: {"ratio": r, "position": p} for c, (r, p) in self.worst.items()},
                "max_error": {"value": self.max_error[0], "position": self.max_error[1]},
                "nonfinite_at": self.nonfinite_at}


def exhaustive(f: Callable[[np.ndarray, np.ndarray], np.ndarray], expect: Expect, n: int, *, chunk: int = 8192,
               seed: int = 0, progress: Callable[[int], None] | None = None, device: str | None = None) -> Exhaustive:
    """Call ``f`` on every position below ``n``, ``chunk`` rows per call (memory is bounded by the chunk), and
    compare every output with ``ropespec.reference.fast`` (the mpmath reference cannot keep up with millions of
    positions; its error, 2 ulp of the pair norm, is added to every class's bound). ``device``: a torch
    device ("cuda") on which the reference and the comparison run, in torch (the same double-double angles
    and tolerance rules); None compares in numpy."""
    classes = tuple(dict.fromkeys(("exact", class_of(expect)) + tuple(CLASSES)))
    class_expects = {c: (with_class(expect, c) if c in CLASSES else expect) for c in classes}
    rng = np.random.default_rng(seed)
    first: dict[str, int | None] = {c: None for c in classes}
    saturated_from: dict[str, int | None] = {c: None for c in classes}
    worst = {c: (0.0, 0) for c in classes}
    max_err, nonfinite_at = (0.0, 0), None
    for start in range(0, n, chunk):
        pos = np.arange(start, min(n, start + chunk), dtype=np.int64)
        x = round_to(rng.standard_normal((len(pos), expect.head_dim)), expect.dtype)
        rows = along_axes(expect, np.maximum(pos, 1)) if expect.multi_axis else pos
        if expect.multi_axis:
            rows[pos == 0] = 0  # position 0 on every axis, as the 1-D sweep starts
        y = np.asarray(f(x, rows), dtype=np.float64)
        rel, ratios, bad, saturated = _compare(expect, class_expects, x, y, rows, device)
        if nonfinite_at is None and bad.any():
            nonfinite_at = int(pos[np.flatnonzero(bad)[0]])
        i = int(np.argmax(rel))
        if rel[i] > max_err[0]:
            max_err = (float(rel[i]), int(pos[i]))
        for c, r in ratios.items():
            if saturated_from[c] is None and saturated[c].any():
                saturated_from[c] = int(pos[np.flatnonzero(saturated[c])[0]])
            j = int(np.argmax(r))
            if r[j] > worst[c][0]:
                worst[c] = (float(r[j]), int(pos[j]))
            if first[c] is None and r[j] > 1.0:
                first[c] = int(pos[np.flatnonzero(r > 1.0)[0]])
        if progress:
            progress(len(pos))
    return Exhaustive(expect, n, first, worst, max_err, nonfinite_at, saturated_from=saturated_from)


def _compare(expect: Expect, class_expects: dict, x, y, pos, device: str | None):
    """One chunk's comparison, per row: the largest error relative to the pair norm (|x| on pass-through
    dims), each class's largest error as a fraction of its bound (plus the reference's own error), and
    whether the row has a non-finite value; computed in numpy, or in torch on ``device``, and handed back
    as numpy vectors of the chunk's length."""
    if device is None:
        xp, X, Y, P, want = np, x, y, pos, fast.apply(expect, x, pos)
        rowmax = lambda a: a.max(axis=1)  # noqa: E731
        th = reference.thetas(expect, reference.seq_len_of(pos))
    else:
        import torch as xp

        X, Y, P = (xp.from_numpy(v).to(device) for v in (x, y, pos))
        want = fast.apply_torch(expect, X, P)
        rowmax = lambda a: a.amax(dim=1)  # noqa: E731
        th = xp.from_numpy(reference.thetas(expect, reference.seq_len_of(pos))).to(device)
    a, b, oa, ob = expect.pair_index()
    rest_dims = expect.passthrough
    err = xp.abs(Y - want)
    err = xp.where(xp.isfinite(err), err, xp.inf)
    pair_err = xp.maximum(err[:, oa], err[:, ob])  # (n, n_pairs): the larger error of each pair's two outputs
    norms = reference.attention_factor(expect) * xp.hypot(X[:, a], X[:, b])
    rest_err, rest = err[:, rest_dims], xp.abs(X[:, rest_dims])  # pass-through dims: equal to x, no rounding allowed

    def fraction(e, s):
        return xp.where(s > 0, e / s, xp.where(e > 0, xp.inf, 0.0))

    with np.errstate(divide="ignore", invalid="ignore"):
        rel = rowmax(fraction(pair_err, norms))
        if rest_dims.size:
            rel = xp.maximum(rel, rowmax(fraction(rest_err, rest)))
            rest_ratio = rowmax(fraction(rest_err, 0.0 * rest))  # any error there: no bound
        ratios, saturated = {}, {}
        for c, ce in class_expects.items():
            bound = tolerance.component_bound(ce, P, th, norms, xp) + tolerance.FAST_REFERENCE_ERROR * norms
            ratio = rowmax(fraction(pair_err, bound))
            ratio = xp.maximum(ratio, rest_ratio) if rest_dims.size else ratio
            # as the sweep's (saturated_ratio): the fastest pair's bound relative to its norm saturates the class
            unit = tolerance.component_bound(ce, P, th, xp.ones_like(norms), xp) - tolerance.atol(expect)
            saturated[c] = rowmax(unit) >= tolerance.SATURATED
            ratios[c] = saturated_ratio(ratio, rel, rowmax(unit), xp)
    bad = rowmax((~xp.isfinite(Y)) * 1.0) > 0

    def host(v):
        return v if device is None else v.cpu().numpy()

    return host(rel), {c: host(v) for c, v in ratios.items()}, host(bad), {c: host(v) for c, v in saturated.items()}
