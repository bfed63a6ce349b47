"""A decode-mode RoPE in numpy: a factory returning a decoder with ``prefill`` and ``step``.

The decoder keeps every key unrotated (float64) and the rotated keys it last returned. The frequency
table belongs to the sequence length (dynamic NTK changes it at every length past the original one,
LongRoPE once, when the length crosses it): while the table of the new length is the one the cache was
rotated with, a step rotates only the new key; when it changed, the decoder rotates every cached key
again with the new table, so that the cache always equals a fresh full pass at the current length.

How it computes, as a production decoder would, in time linear in the cache per step:
- the table: float64 from the spec's formulas (:mod:`ropespec.spec.scaling`), evaluated in float64 for dynamic
  NTK's per-length base, and from :func:`ropespec.spec.angles.theta_hi_lo` (exact, cached) for the others;
- cos and sin of p * theta: float64 output takes np.cos / np.sin of the float64 angle; float32 output,
  whose bound is 2^29 times looser, uses the angle-addition formula over blocks of 64 positions
  (p = 64 q + j: a table of cos/sin per block start and per offset, a few float64 ulp), about 3 times
  faster at a few thousand cached keys;
- the rotation in float64 into preallocated buffers (grown by doubling), cast once to the output dtype.
"""

from __future__ import annotations

import numpy as np

from ropespec.spec import scaling, tables
from ropespec.spec.angles import theta_hi_lo
from ropespec.spec.definitions import rotate

ARRAY = "numpy"
_BLOCK = 64


class Decoder:
    def __init__(self, expect):
        self.e = expect
        self.dtype = np.dtype(expect.dtype)
        self.a, self.b, self.oa, self.ob = expect.pair_index()
        self.m = expect.rotary_dim // 2
        self.n = 0
        self._grow(16)
        self.table = None  # (theta, g) the cached keys were rotated with

    def _grow(self, capacity: int) -> None:
        d, n = self.e.head_dim, getattr(self, "n", 0)
        xa, xb, pos, out = np.empty((capacity, self.m)), np.empty((capacity, self.m)), \
            np.empty(capacity, dtype=np.int64), np.empty((capacity, d), dtype=self.dtype)
        if n:
            xa[:n], xb[:n], pos[:n], out[:n] = self.xa[:n], self.xb[:n], self.pos[:n], self.out[:n]
        self.xa, self.xb, self.pos, self.out = xa, xb, pos, out

    def _append(self, x: np.ndarray, positions: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float64).reshape(-1, self.e.head_dim)
        k = len(x)
        if self.n + k > len(self.pos):
            self._grow(max(2 * len(self.pos), self.n + k))
        s = slice(self.n, self.n + k)
        self.xa[s], self.xb[s], self.pos[s] = x[:, self.a], x[:, self.b], positions
        self.out[s] = x  # pass-through dims (beyond rotary_dim) as they came; the rotated ones are written below
        self.n += k

    def _table(self, length: int) -> tuple[np.ndarray, float]:
        e = self.e
        variant = tables.table_variant(e, length)
        if e.method.grows_with_length and variant > scaling.original_length(e):
            s = e.rope_scaling
            base = scaling.dynamic_base(float(e.rope_theta), float(s["factor"]), float(variant),
                                        float(scaling.original_length(e)), float(e.rotary_dim))
            return scaling.ladder(base, np.arange(self.m, dtype=np.float64), float(e.rotary_dim)), 1.0
        hi, _, g = theta_hi_lo(e, length)
        return hi, g

    def _cos_sin(self, p: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.dtype == np.float64 or len(p) < 4 * _BLOCK:
            angle = p[:, None].astype(np.float64) * theta
            return np.cos(angle), np.sin(angle)
        q, j = np.divmod(p, _BLOCK)
        starts, qi = np.unique(q, return_inverse=True)
        big = (starts * _BLOCK).astype(np.float64)[:, None] * theta
        small = np.arange(_BLOCK, dtype=np.float64)[:, None] * theta
        C, S, c, s = np.cos(big)[qi], np.sin(big)[qi], np.cos(small)[j], np.sin(small)[j]
        return C * c - S * s, S * c + C * s

    def _rotate(self, rows: slice, table) -> None:
        theta, g = table
        c, s = self._cos_sin(self.pos[rows], theta)
        if g != 1.0:
            c, s = g * c, g * s
        out = self.out[rows]
        out[:, self.oa], out[:, self.ob] = rotate(self.xa[rows], self.xb[rows], c, s)

    def _keys(self, new: int) -> np.ndarray:
        """Rotate the ``new`` keys just appended (and every older one when the table changed); a copy of
        all keys, which the caller may keep."""
        table = self._table(int(self.pos[: self.n].max()) + 1)  # the sequence's length: its last position + 1
        same = self.table is not None and self.table[1] == table[1] and np.array_equal(self.table[0], table[0])
        self._rotate(slice(self.n - new if same else 0, self.n), table)
        self.table = table
        return self.out[: self.n].copy()

    def prefill(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        self.n, self.table = 0, None
        self._append(x, np.asarray(positions, dtype=np.int64))
        return self._keys(self.n)

    def step(self, x: np.ndarray, position: int) -> np.ndarray:
        self._append(x, np.array([position], dtype=np.int64))
        return self._keys(1)


def make(expect):
    if expect.dtype not in ("float64", "float32"):
        raise NotImplementedError(f"numpy decoder computes float64 and float32, not {expect.dtype}")
    return Decoder(expect)
