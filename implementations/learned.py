"""A learned position table, in numpy: ``make(expect)`` returns a table of max_len = max_position rows
of head_dim values (seeded random init), callable as ``table(positions)`` -> (n, d). Positions at or
beyond max_len raise IndexError: never wrap, clamp or read past the end."""

from __future__ import annotations

import numpy as np


class Table:
    def __init__(self, max_len: int, d: int, seed: int = 0):
        self.max_len = max_len
        self.weight = np.random.default_rng(seed).standard_normal((max_len, d)) * 0.02

    @property
    def num_parameters(self) -> int:
        return int(self.weight.size)

    def __call__(self, positions):
        p = np.asarray(positions, dtype=np.int64)
        if p.size and (p.min() < 0 or p.max() >= self.max_len):
            bad = int(p.max() if p.max() >= self.max_len else p.min())
            raise IndexError(f"position {bad} is outside the table (max_len {self.max_len})")
        return self.weight[p].copy()


def make(expect):
    if expect.dtype != "float64":
        raise NotImplementedError("the numpy table holds float64")
    return Table(expect.max_position, expect.head_dim)
