"""Black-box measurement of what an implementation computes: each pair's frequency and the attention
factor, read off the rotation of basis vectors.

One row x = sum of e_a over the first dim a of every pair (under the expected convention) rotates each
pair independently: at position p the pair comes out as g (cos p theta_i, sin p theta_i). The angle at
p = 1 gives theta_i (every theta <= 1 < pi); doubling p, the angle is unwrapped against the previous
estimate, so the estimate sharpens like 1/p until the implementation's own angle error dominates.
A second row pins the call's length (seq_len), for the types whose table depends on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ropespec.spec.expectation import CONVENTIONS, Expect


def text_view(f, e: Expect):
    """A multi-axis implementation called as 1-D RoPE: rows at one position p on every axis (text tokens), which the
    references read the same way; f itself for 1-D RoPE. The probes here call f with one position per row."""
    if not e.multi_axis:
        return f

    def at_text(x, positions):
        p = np.asarray(positions, dtype=np.int64)
        return f(x, np.repeat(p[:, None], e.n_axes, axis=1) if p.ndim == 1 else p)

    return at_text


@dataclass
class Measured:
    thetas: np.ndarray  # per pair
    attention_factor: float  # mean output norm / input norm over pairs at p = 1
    precision: np.ndarray  # per pair: relative uncertainty of theta (last step's disagreement)
    max_position: int  # the largest position used


def measure(f, expect, *, seq_len: int | None = None, max_position: int | None = None) -> Measured:
    """theta'_i and the attention factor of ``f`` (float64 in and out) under the expected convention:
    :func:`frequencies` for the angles, the output norm of a unit pair at p = 1 for the factor."""
    pairs = list(zip(expect.pairs(), expect.out_pairs()))
    fr = frequencies(f, expect.head_dim, pairs, max_position=max_position or expect.max_position, seq_len=seq_len)
    _, norms = angles(f, expect.head_dim, pairs, 1, seq_len)
    return Measured(fr.thetas, float(np.mean(norms)), fr.precision, fr.max_position)


@dataclass
class Pairing:
    pairs: list[tuple[int, int]]  # input dims (a, b) with a < b that turn together, in order of a
    untouched: list[int]  # dims whose basis vector comes out unchanged
    problem: str | None  # why the map is not a rotation of pairs of dims, or None
    out: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # pair -> where (a, b) are written

    def convention(self, head_dim: int, rotary_dim: int) -> str | None:
        """The convention (:data:`ropespec.spec.expectation.CONVENTIONS`) whose pairs and layout these are, or None."""
        for c in CONVENTIONS:
            ec = Expect(head_dim=head_dim, rotary_dim=rotary_dim, convention=c)
            if sorted(self.pairs) == ec.pairs() and all(self.out[p] == o for p, o in zip(ec.pairs(), ec.out_pairs())):
                return c
        return None

    def widened(self, head_dim: int) -> tuple[str, int] | None:
        """(convention, rotary_dim) whose first pairs these are, the others staying still (a pair of frequency 0
        passes through, which a probe cannot tell from a dim beyond the rotary ones): proportional RoPE turns the
        first k pairs of the half convention over the whole head. None where no wider rotary width lays them out."""
        k = len(self.pairs)
        for rotary_dim in range(2 * k + 2, head_dim + 1, 2):
            for c in CONVENTIONS:
                ec = Expect(head_dim=head_dim, rotary_dim=rotary_dim, convention=c)
                first = list(zip(ec.pairs(), ec.out_pairs()))[:k]
                if sorted(self.pairs) == sorted(p for p, _ in first) and all(self.out[p] == o for p, o in first):
                    return c, rotary_dim
        return None

    def laid_out(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """((a, b), (oa, ob)) for every pair, in order of a."""
        return [(p, self.out[p]) for p in sorted(self.pairs)]


#: the most rows one call of a probe (or of a property reading basis vectors) holds: one tile of the smallest size
#: kernels use, so that what it reads is the rotation and never a long call's tiling (which rope.conformance's long
#: calls check, and name)
SHORT_CALL = 64


def in_short_calls(f, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """f(x, positions) as calls of at most :data:`SHORT_CALL` rows each, the rows put back in order."""
    if len(x) <= SHORT_CALL:
        return f(x, positions)
    return np.concatenate([f(x[i:i + SHORT_CALL], positions[i:i + SHORT_CALL]) for i in range(0, len(x), SHORT_CALL)])


def basis(f, head_dim: int, position) -> np.ndarray:
    """f(e_j, position) for every basis vector e_j (row j), in short calls; ``position`` an int, or one position
    vector of a multi-axis RoPE."""
    p = np.asarray(position, dtype=np.int64)
    return in_short_calls(f, np.eye(head_dim), np.broadcast_to(p, (head_dim,) + p.shape).copy())


def convention(f, head_dim: int, positions=(1, 3)) -> Pairing:
    """Which dims turn together, and where each pair's result is written: the output of each basis
    vector at a few positions. Two input dims whose outputs share the same two dims are a pair; the
    pair is written in place, or elsewhere (``rope_interleave`` writes interleaved pairs in the half
    layout). The order of the written pair is the one in which e_a's first output equals e_b's second
    (both cos p theta)."""
    d = head_dim
    support: dict[int, set[int]] = {j: set() for j in range(d)}
    changed = np.zeros(d, dtype=bool)
    ys = []
    for p in positions:
        y = basis(f, d, p)
        ys.append(y)
        nz = y != 0
        changed |= (np.diag(y) != 1.0) | (nz & ~np.eye(d, dtype=bool)).any(axis=1)
        for j in range(d):
            support[j].update(int(k) for k in np.flatnonzero(nz[j]))
    problem = None
    groups: dict[frozenset, list[int]] = {}
    for j in range(d):
        s = support[j]
        if not changed[j]:
            continue
        if len(s) > 2:
            problem = problem or f"dim {j} leaks into dims {sorted(s - {j})[:6]}: not a rotation of pairs"
        elif len(s) == 2:
            groups.setdefault(frozenset(s), []).append(j)
    pairs, out = [], {}
    for s, js in groups.items():
        u, v = sorted(s)
        if len(js) == 2:
            a, b = js
            y = ys[0]
            straight = abs(y[a, u] - y[b, v]) + abs(y[a, v] + y[b, u])
            crossed = abs(y[a, v] - y[b, u]) + abs(y[a, u] + y[b, v])
            pairs.append((a, b))
            out[(a, b)] = (u, v) if straight <= crossed else (v, u)
        elif len(js) == 1 and js[0] in s:
            j = js[0]
            k = next(iter(s - {j}))
            problem = problem or f"dim {j} turns with dim {k}, but dim {k} with {sorted(support[k] - {k})}"
        else:
            problem = problem or f"dims {sorted(js)} are written to dims {sorted(s)}: not a rotation of pairs"
    pairs.sort()
    return Pairing(pairs, [j for j in range(d) if not changed[j]], problem, out)


def _split(pairs):
    """Input and output index arrays of ``pairs``: (a, b) tuples (in place) or ((a, b), (oa, ob))."""
    pairs = [p if isinstance(p[0], tuple) else (p, p) for p in pairs]
    a, b, oa, ob = (np.array(ix) for ix in zip(*[(i, j, k, m) for (i, j), (k, m) in pairs]))
    return a, b, oa, ob


def angles(f, head_dim: int, pairs, p: int, seq_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The angle each pair turns by at position p, and its output norm (a unit input). ``pairs``:
    (a, b) turned in place, or ((a, b), (oa, ob)) for a pair written elsewhere."""
    x = np.zeros((2, head_dim))
    a, _, oa, ob = _split(pairs)
    x[0, a] = 1.0
    y = f(x, np.array([p, max(p, (seq_len or 1) - 1)], dtype=np.int64))
    return np.arctan2(y[0, ob], y[0, oa]), np.hypot(y[0, oa], y[0, ob])


@dataclass
class Frequencies:
    thetas: np.ndarray  # per pair, signed (negative: turning the other way)
    offset: np.ndarray  # per pair: the angle at p = 0 divided by theta (a position offset)
    precision: np.ndarray  # per pair: relative change of theta in the last doubling
    max_position: int


def frequencies(f, head_dim: int, pairs, *, max_position: int, seq_len: int | None = None) -> Frequencies:
    """theta_i and a constant position offset c, from phi(p) = theta (p + c): the slope between
    p = 0 and p = 1 (theta < pi), then sharpened by unwrapping at p = 3, 7, 15, ..."""
    top = max_position - 1 if seq_len is None else min(max_position, seq_len) - 1
    phi0, _ = angles(f, head_dim, pairs, 0, seq_len)
    phi1, _ = angles(f, head_dim, pairs, 1, seq_len)
    theta = np.angle(np.exp(1j * (phi1 - phi0)))
    prec = np.ones_like(theta)
    p = 1
    while 2 * p + 1 <= top and p < 1 << 40:
        p = 2 * p + 1
        phi, _ = angles(f, head_dim, pairs, p, seq_len)
        turns = np.round((phi0 + p * theta - phi) / (2 * math.pi))
        est = (phi + 2 * math.pi * turns - phi0) / p
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.abs(est - theta) / np.abs(est)
        theta = est
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = np.where(theta != 0, phi0 / theta, 0.0)
    return Frequencies(theta, offset, prec, p)


def shared_offset(fr: Frequencies, members) -> np.ndarray:
    """The offsets of pairs ``members`` that share one (an axis's), unwrapped: a pair's angle at p = 0 is known modulo
    2 pi only, so phi0 / theta reads an offset c as c - 2 pi k / theta once |c theta| > pi. From the slowest pair up,
    each pair's angle is taken with the whole turns that bring it nearest the offset read so far."""
    members = np.asarray(members, dtype=np.int64)
    out = fr.offset.copy()
    moving = [j for j in members[np.argsort(np.abs(fr.thetas[members]))] if fr.thetas[j] != 0]
    if not moving:
        return out
    c = out[moving[0]]
    for j in moving:
        th = fr.thetas[j]
        phi0 = out[j] * th
        turns = np.round((c * th - phi0) / (2 * math.pi))
        out[j] = (phi0 + 2 * math.pi * turns) / th
        c = out[j]
    return out
