"""The precision sweep: how an implementation's error grows with the position, and up to which
position each tolerance class of :mod:`ropespec.spec.tolerance` holds.

Positions are log-spaced from 1 to max_position - 1 and made odd (a power of two hides the error
of the product p * theta, which is then exact). At each position several random vectors are rotated
and compared with the mpmath reference; the error of each component is compared with each class's
bound at that position and pair. A class holds up to position P when every swept position <= P is
within its bound.

Used by ``ropespec precision`` and by the large-position conformance property of ``ropespec check``; every position
(``--exhaustive``) is :mod:`ropespec.properties.exhaustive`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ropespec import reference
from ropespec.properties.numerics import exact, pair_norms, per_dim
from ropespec.spec import tolerance
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect

#: angle classes reported besides the declared one: (angle_dtype, inv_freq_dtype)
CLASSES = {
    "exact": ("exact", "exact"),
    "float64": ("float64", "float64"),
    "float32": ("float32", "float32"),
    "bfloat16": ("bfloat16", "bfloat16"),
    "float16": ("float16", "float16"),
}


def class_of(expect: Expect) -> str:
    """The name of the class an expectation declares (its angle and inv_freq dtypes)."""
    for name, (a, i) in CLASSES.items():
        if (expect.angle_dtype, expect.inv_freq_dtype) == (a, i):
            return name
    return f"angles {expect.angle_dtype}, inv_freq {expect.inv_freq_dtype}"


def with_class(expect: Expect, name: str) -> Expect:
    a, i = CLASSES[name]
    return expect.replace(angle_dtype=a, inv_freq_dtype=i)


def sweep_positions(max_position: int, *, per_octave: int = 4, min_position: int = 1) -> np.ndarray:
    """Odd positions, log-spaced from ``min_position`` to ``max_position - 1``."""
    top = max_position - 1
    if top < min_position:
        return np.array([min_position], dtype=np.int64)
    n = max(2, int(math.ceil(math.log2(max(top, 2) / min_position) * per_octave)) + 1)
    raw = np.unique(np.round(np.geomspace(min_position, top, n)).astype(np.int64))
    odd = np.where(raw % 2 == 0, raw + 1, raw)
    odd = np.where(odd > top, odd - 2, odd)
    return np.unique(np.clip(odd, min_position, top))


def along_axes(expect: Expect, positions: np.ndarray) -> np.ndarray:
    """Swept positions as rows of ``expect``: p itself for 1-D RoPE; for a multi-axis RoPE p on axis 0 and p - 2a on
    axis a (p + 2a where that would fall below 1), so every axis reaches the large positions swept, each row's axes
    differ, and odd positions stay odd."""
    p = np.asarray(positions, dtype=np.int64)
    if not expect.multi_axis or p.ndim == 2:
        return p
    top = expect.max_position - 1
    cols = []
    for a in range(expect.n_axes):
        v = p - 2 * a
        cols.append(np.clip(np.where(v >= 1, v, p + 2 * a), 0, top))
    return np.stack(cols, axis=1)


@dataclass
class Sweep:
    """What a sweep measured. Errors are relative to the norm of the pair (so they compare with
    ``bound / ||x_pair||``); ``ratio[c]`` is, per position, the worst error / bound of class c."""

    expect: Expect
    positions: np.ndarray
    max_error: np.ndarray
    median_error: np.ndarray
    ratio: dict[str, np.ndarray] = field(default_factory=dict)
    bounds: dict[str, np.ndarray] = field(default_factory=dict)  # class bound of pair 0, unit pair norm
    nonfinite: np.ndarray | None = None
    #: a user's own tolerance (atol, rtol), torch.testing.assert_close's |actual - expected| <= atol + rtol |expected|
    #: elementwise, and per position the worst |actual - expected| / (atol + rtol |expected|) under it
    allclose: tuple[float, float] | None = None
    allclose_ratio: np.ndarray | None = None
    #: the positions the model uses, [0, domain): the verdict's; a sweep past it measures for information (None: the
    #: whole sweep is the domain)
    domain: int | None = None

    def in_domain(self) -> np.ndarray:
        """Per swept position: is it one the model uses (below :attr:`domain`)?"""
        return np.ones(len(self.positions), dtype=bool) if self.domain is None else self.positions < self.domain

    def beyond(self) -> bool:
        """Whether the sweep measured past the domain (for information)."""
        return not bool(self.in_domain().all())

    def allclose_first_exceeded(self, within: bool = False) -> int | None:
        """The first swept position where the output leaves the user's tolerance (None: it never does); ``within``:
        among the domain's positions only."""
        bad = np.flatnonzero(~(self.allclose_ratio <= 1.0) & (self.in_domain() if within else True))
        return int(self.positions[bad[0]]) if bad.size else None

    def informative(self, cls: str) -> np.ndarray:
        """Per position: does class ``cls`` still promise anything? Not once its bound (pair 0's, the
        fastest pair's, relative to the pair norm) reaches :data:`ropespec.spec.tolerance.SATURATED`, the largest error
        any output of a pair's norm can have."""
        return self.bounds[cls] < tolerance.SATURATED

    def promises_until(self, cls: str) -> int | None:
        """The last swept position before class ``cls``'s bound saturates (None: it never does here)."""
        bad = np.flatnonzero(~self.informative(cls))
        if bad.size == 0:
            return None
        return int(self.positions[bad[0] - 1]) if bad[0] > 0 else 0

    def safe_position(self, cls: str) -> int | None:
        """The largest swept position up to which class ``cls`` holds, counting only positions where its
        bound still promises something (None: not even at the first)."""
        ok = (self.ratio[cls] <= 1.0) & self.informative(cls)
        if not ok[0]:
            return None
        bad = np.flatnonzero(~ok)
        return int(self.positions[-1] if bad.size == 0 else self.positions[bad[0] - 1])

    def first_failure(self, cls: str, within: bool = False) -> int | None:
        """The first swept position at which class ``cls`` fails (None: it holds everywhere): its error past its
        bound, or noise where it promises nothing (:func:`saturated_ratio`); ``within``: among the domain's positions
        only, the verdict's."""
        bad = np.flatnonzero(~(self.ratio[cls] <= 1.0) & (self.in_domain() if within else True))
        return int(self.positions[bad[0]]) if bad.size else None

    def first_nonfinite(self, within: bool = False) -> int | None:
        """The first swept position with a non-finite output (None: none)."""
        if self.nonfinite is None:
            return None
        bad = np.flatnonzero(self.nonfinite & (self.in_domain() if within else True))
        return int(self.positions[bad[0]]) if bad.size else None

    def is_noise(self, cls: str, p: int) -> bool:
        """Whether class ``cls`` fails at swept position ``p`` because it is saturated there and the output is noise."""
        i = int(np.flatnonzero(self.positions == p)[0])
        return bool(not self.informative(cls)[i] and self.ratio[cls][i] > 1.0)

    def growth(self) -> float | None:
        """Exponent k of max_error ~ p^k, fitted over the upper half of the positions where the
        error is above float64 noise; None when there is too little to fit."""
        keep = np.isfinite(self.max_error) & (self.max_error > 1e-15) & (self.positions >= 2)
        p, e = self.positions[keep], self.max_error[keep]
        if p.size < 4:
            return None
        half = p.size // 2
        k, _ = np.polyfit(np.log(p[half:]), np.log(e[half:]), 1)
        return float(k)

    def to_json(self) -> dict:
        classes = list(self.ratio)
        return {
            "expect": self.expect.to_dict(),
            "max_position": self.domain,  # the verdict's positions are those below it; the rest is information
            "positions": self.positions.tolist(),
            "max_error": [_num(v) for v in self.max_error],
            "median_error": [_num(v) for v in self.median_error],
            "bounds": {c: [_num(v) for v in self.bounds[c]] for c in classes},
            "safe_position": {c: self.safe_position(c) for c in classes},
            "promises_until": {c: self.promises_until(c) for c in classes},
            "growth_exponent": self.growth(),
            "allclose": None if self.allclose is None else {
                "atol": self.allclose[0], "rtol": self.allclose[1],
                "first_exceeded": self.allclose_first_exceeded(),
                "ratio": [_num(v) for v in self.allclose_ratio]},
        }


#: positions per call of a sweep (each with its vectors): calls of this size hold far apart positions
SWEEP_CHUNK = 16


def _num(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def measure(
    f: Callable[[np.ndarray, np.ndarray], np.ndarray],
    expect: Expect,
    positions: np.ndarray,
    *,
    vectors: int = 4,
    seed: int = 0,
    classes: tuple[str, ...] | None = None,
    progress: Callable[[int], None] | None = None,
    chunk: int = None,
    allclose: tuple[float, float] | None = None,
) -> Sweep:
    """Rotate ``vectors`` random vectors at every position with ``f`` and compare with the reference, ``chunk``
    positions per call (default :data:`SWEEP_CHUNK`); ``allclose``: a user's (atol, rtol) measured too
    (:attr:`Sweep.allclose_ratio`)."""
    chunk = chunk or SWEEP_CHUNK
    classes = tuple(classes) if classes is not None else tuple(dict.fromkeys(("exact", class_of(expect)) + tuple(CLASSES)))
    rng = np.random.default_rng(seed)
    g = reference.attention_factor(expect)
    n_pos = len(positions)
    max_err, med_err = np.zeros(n_pos), np.zeros(n_pos)
    ratio = {c: np.zeros(n_pos) for c in classes}
    nonfinite = np.zeros(n_pos, dtype=bool)
    user = np.zeros(n_pos) if allclose is not None else None
    class_expects = {c: (with_class(expect, c) if c in CLASSES else expect) for c in classes}
    swept = along_axes(expect, positions)  # a multi-axis RoPE is swept on every axis at once
    for start in range(0, n_pos, chunk):
        pos_chunk = swept[start : start + chunk]
        pos = np.repeat(pos_chunk, vectors, axis=0)
        x = round_to(rng.standard_normal((len(pos), expect.head_dim)), expect.dtype)
        y = f(x, pos)
        want, own = exact(expect, x, pos)  # the fast reference where it suffices; every bound carries its error
        norms = g * pair_norms(expect, x)
        scale = per_dim(expect, norms, passthrough=np.abs(x))
        th = reference.thetas(expect, reference.seq_len_of(pos))
        err = np.abs(y - want)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(scale > 0, err / scale, np.where(err > 0, np.inf, 0.0))
        rel = np.where(np.isnan(rel), np.inf, rel)
        rows = rel.reshape(len(pos_chunk), vectors * expect.head_dim)
        max_err[start : start + len(pos_chunk)] = rows.max(axis=1)
        med_err[start : start + len(pos_chunk)] = np.median(rel.reshape(len(pos_chunk), vectors, -1).max(axis=2), axis=1)
        nonfinite[start : start + len(pos_chunk)] = ~np.isfinite(y).reshape(len(pos_chunk), -1).all(axis=1)
        if user is not None:  # torch.testing's test, elementwise, against the exact output
            allowed = allclose[0] + allclose[1] * np.abs(want)
            with np.errstate(divide="ignore", invalid="ignore"):
                u = np.where(allowed > 0, err / allowed, np.where(err > 0, np.inf, 0.0))
            u = np.where(np.isnan(u), np.inf, u)
            user[start : start + len(pos_chunk)] = u.reshape(len(pos_chunk), -1).max(axis=1)
        for c in classes:
            b = per_dim(expect, tolerance.component_bound(class_expects[c], pos, th, norms)) + own
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(b > 0, err / b, np.where(err > 0, np.inf, 0.0))
            r = np.where(np.isnan(r), np.inf, r)
            ratio[c][start : start + len(pos_chunk)] = r.reshape(len(pos_chunk), -1).max(axis=1)
        if progress:
            progress(len(pos_chunk))
    bounds = {}
    th = reference.thetas(expect, reference.seq_len_of(swept))
    for c in classes:
        unit = np.ones((n_pos, expect.n_pairs))
        b = tolerance.component_bound(class_expects[c], swept, th, unit) - tolerance.atol(expect)
        bounds[c] = b.max(axis=1) if expect.multi_axis else b[:, 0]  # the fastest pair's (pair 0 in 1-D)
        ratio[c] = saturated_ratio(ratio[c], max_err, bounds[c])
    return Sweep(expect, np.asarray(positions, dtype=np.int64), max_err, med_err, ratio, bounds, nonfinite,
                 allclose=allclose, allclose_ratio=user)


def saturated_ratio(ratio, error, bound, xp=np):
    """Each position's ratio to a class's bound, where the class is saturated (its bound, relative to the pair norm,
    reaches :data:`ropespec.spec.tolerance.SATURATED`) also the error against :data:`ropespec.spec.tolerance.NOISE`: a bound any output
    meets never makes noise a pass, so the class fails there where the output is no rotation. One comparison gives
    the verdict, the table's marks, the plot and the JSON."""
    return xp.where(bound >= tolerance.SATURATED, xp.maximum(ratio, error / tolerance.NOISE), ratio)


_LOW = ("float32", "float16", "bfloat16")  # finest first: the most precise explanation that fits wins


def _candidates(expect: Expect, positions: np.ndarray):
    """Rotations an implementation computing in low precision would produce: (what, cos, sin)."""
    th = reference.thetas(expect, reference.seq_len_of(positions))
    p = expect.pair_positions(positions)  # (n, 1), or (n, pairs): each pair's own axis's position
    for d in _LOW:
        yield f"positions rounded to {d}", *_cs(round_to(p, d) * th[None, :])
        yield f"inverse frequencies rounded to {d}", *_cs(p * round_to(th, d)[None, :])
        yield f"angles formed in {d}", *_cs(round_to(round_to(p, d) * round_to(th, d)[None, :], d))
        c, s = _cs(p * th[None, :])
        yield f"cos/sin tables stored in {d}", round_to(c, d), round_to(s, d)
        # the whole chain in the dtype: what a table computed under autocast is (the product a low-precision
        # matmul, cos and sin of its result rounded again)
        c, s = _cs(round_to(round_to(p, d) * round_to(th, d)[None, :], d))
        yield f"angles and cos/sin tables formed in {d} (a table computed under autocast)", round_to(c, d), round_to(s, d)


def _cs(phi):
    with np.errstate(invalid="ignore"):  # float16 positions beyond 65504 are inf
        return np.cos(phi), np.sin(phi)


def explain_low_precision(f, expect: Expect, positions: np.ndarray, *, seed: int = 0) -> str | None:
    """Evidence that an implementation computes its angles or tables in low precision: the
    low-precision rotation (positions, inverse frequencies, angles or cos/sin in float32, float16
    or bfloat16) that its output matches to within a correct rotation's rounding, at least 10 times
    closer than it is to the exact result; None when no candidate explains it."""
    positions = along_axes(expect, np.asarray(positions, dtype=np.int64))
    x = round_to(np.random.default_rng(seed).standard_normal((len(positions), expect.head_dim)), expect.dtype)
    y = f(x, positions)
    g = reference.attention_factor(expect)
    scale = per_dim(expect, g * pair_norms(expect, x), passthrough=np.abs(x))
    want = reference.apply(expect, x, positions)
    off = float(np.max(np.abs(y - want) / scale))
    if not np.isfinite(off) or off <= tolerance.rotation_rtol(expect):
        return None  # right at these positions (within a correct rotation's rounding): nothing to explain
    th = reference.thetas(expect, reference.seq_len_of(positions))
    declared = per_dim(expect, tolerance.component_bound(expect, positions, th, g * pair_norms(expect, x)))
    if np.all(np.abs(y - want) <= declared):
        return None  # within what the declared class allows (its angles formed in its dtype): rounding it promised
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))
    oa, ob = (np.array(ix) for ix in zip(*expect.out_pairs()))
    best = None
    for what, c, s in _candidates(expect, positions):
        yc = x.copy()
        yc[:, oa] = g * (x[:, a] * c - x[:, b] * s)
        yc[:, ob] = g * (x[:, a] * s + x[:, b] * c)
        err = float(np.max(np.abs(y - yc) / scale))
        # explained: as close to the candidate as a correct rotation in the output dtype can be, and
        # at least 10 times closer than to the exact result
        if err <= tolerance.rotation_rtol(expect) and 10 * err <= off and (best is None or err < 0.5 * best[1]):
            best = (what, err)
    if best is None:
        return _angle_signature(expect, x, y, positions)
    return f"the output matches a rotation with {best[0]} (error {best[1]:.2g} against it, {off:.2g} against the exact one)"


def _angle_signature(expect: Expect, x: np.ndarray, y: np.ndarray, positions: np.ndarray) -> str | None:
    """Low precision recognised by the error's signature rather than by one operation order: every pair
    keeps its norm and turns by the right angle phi = p theta_i up to an error of at most 2 u |phi| for
    the unit roundoff u of a lower dtype (positions, inverse frequencies or angles rounded to it, in any
    order), and the error reaches a tenth of that somewhere (the dtype is not far finer than that). The
    finest dtype that fits is named; entries whose allowance is past 0.5 rad tell nothing and are left out."""
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))
    oa, ob = (np.array(ix) for ix in zip(*expect.out_pairs()))
    g = reference.attention_factor(expect)
    th = reference.thetas(expect, reference.seq_len_of(positions))
    phi = np.abs(expect.pair_positions(positions) * th[None, :])
    zx = x[:, a] + 1j * x[:, b]
    want = reference.apply(expect, x, positions)
    zw, zy = want[:, oa] + 1j * want[:, ob], y[:, oa] + 1j * y[:, ob]
    if not np.all(np.isfinite(zy)) or np.any(zw == 0):
        return None
    rounding = tolerance.rotation_rtol(expect)
    norm_err = np.abs(np.abs(zy) - g * np.abs(zx)) / (g * np.abs(zx))
    dphi = np.abs(np.angle(zy / zw))
    for d in _LOW:
        u = tolerance.unit_roundoff(d)
        allowed = 2 * u * phi + 2 * rounding
        # entries that tell: the allowance is below 0.5 rad, and the dtype's rounding stands above the output's
        informative = (2 * u * phi <= 0.5) & (u * phi >= 2 * rounding)
        if informative.sum() < 2 or np.any(norm_err > 2 * rounding + u):
            continue
        ratio = dphi[informative] / (u * phi[informative])
        # proportional to the angle: the largest angles (top quarter) carry errors as large, in units of
        # u |phi|, as any (an error of fixed size, which is no rounding of the angle, fades there as 1/|phi|)
        large = phi[informative] >= np.quantile(phi[informative], 0.75)
        # and within the allowance everywhere it says something, not only where it is informative: a pair whose
        # angle is too small for the rounding to show, and yet off (a wrong frequency of a slow pair), is no rounding
        said = 2 * u * phi <= 0.5
        if (np.all(dphi[said] <= allowed[said]) and np.max(ratio) >= 0.1
                and np.max(ratio[large]) >= 0.25 * np.max(ratio) and np.max(dphi[informative]) >= 4 * rounding):
            k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
            return (f"every pair keeps its norm and is off its angle by at most {np.max(ratio):.2g} u |p theta| for "
                    f"u of {d} ({u:.2g}): positions, inverse frequencies or angles rounded to {d} "
                    f"(worst {float(dphi[informative][k]):.2g} rad)")
    return None


def describe_position(p: int | None) -> str:
    return "no position" if p is None else f"p ~ {p:.2g}" if p >= 1e4 else f"p = {p}"


def swept_past(expect: Expect, top: int) -> Expect:
    """The expectation a sweep past the domain measures under: ``expect`` with max_position ``top``, each table it
    reads kept (an original length that falls back to max_position stays expect's), so that the positions beyond
    the domain are measured against the same RoPE."""
    s = expect.to_dict()["rope_scaling"]
    if s is not None and "original_max_position_embeddings" in expect.method.keys \
            and "original_max_position_embeddings" not in s:
        expect = expect.replace(rope_scaling={**s, "original_max_position_embeddings": expect.max_position})
    return expect.replace(max_position=top)


def holds(p: int | None, past: bool = False) -> str:
    """'holds up to p = 1023', or 'holds at no position swept' when even the first position fails."""
    verb = "held" if past else "holds"
    return f"{verb} at no position swept" if p is None else f"{verb} up to {describe_position(p)}"


def times(ratio: float) -> str:
    """'2.5 times the bound'; a non-finite ratio says so."""
    return f"{ratio:.3g} times the bound" if np.isfinite(ratio) else "beyond any bound (not finite)"
