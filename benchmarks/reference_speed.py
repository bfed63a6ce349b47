"""How fast ropespec.reference.fast is: against the mpmath reference, and against the practical floor, a plain numpy
float64 RoPE (one product p * theta, np.cos and np.sin, one multiply-add per output element).

    python benchmarks/reference_speed.py [--rows N] [--repeats K]

Part 1: the mpmath reference against ropespec.reference.fast, 64 rows of a 128-dim head (base 5e5) at distinct odd
positions up to 2**40, cold caches for mpmath. Part 2: ropespec.reference.fast against the plain RoPE in the same
run (interleaved, median of K), N rows at N distinct positions (no row shares a position: the worst case
for ropespec.reference.fast, which computes one table row per distinct position) drawn below 2**12, 2**20, 2**31
and 2**40, and once with every position shared by 8 rows. The plain RoPE is not accurate (its angle is off
by |p theta| 2**-53 and cos of a large argument inherits it); it is the speed to compare with. The
target: ropespec.reference.fast within 3x of it.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from datetime import date

import numpy as np

from ropespec import reference
from ropespec.reference import rope as ref_rope
from ropespec.spec import Expect
from ropespec.spec.angles import theta_hi_lo


def plain_rope(e: Expect, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The floor: float64 angles, np.cos/np.sin, the rotation (half convention, full rotary)."""
    hi = theta_hi_lo(e)[0]
    angle = positions.astype(np.float64)[:, None] * hi
    c, s = np.cos(angle), np.sin(angle)
    h = e.head_dim // 2
    out = np.empty_like(x)
    x1, x2 = x[:, :h], x[:, h:]
    out[:, :h] = x1 * c - x2 * s
    out[:, h:] = x1 * s + x2 * c
    return out


def timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    e = Expect(head_dim=128, rope_theta=5e5, dtype="float64")
    rng = np.random.default_rng(0)
    print(f"`python benchmarks/reference_speed.py --rows {args.rows} --repeats {args.repeats}`, {date.today()}, "
          f"{platform.machine()}, Python {platform.python_version()}; medians of {args.repeats}")

    x = rng.standard_normal((64, 128))
    pos = rng.integers(0, 2**39, 64) * 2 + 1
    slow, fast = [], []
    for _ in range(args.repeats):
        ref_rope.cache_clear()
        slow += timed(lambda: reference.apply(e, x, pos), 1)
        fast += timed(lambda: reference.fast.apply(e, x, pos), 1)
    ms, mf = statistics.median(slow), statistics.median(fast)
    print(f"\n64 rows: mpmath {ms * 1e3:.1f} ms, ropespec.reference.fast {mf * 1e3:.3f} ms: fast is {ms / mf:.0f}x faster\n")

    print("| positions | rows | plain numpy RoPE | ropespec.reference.fast | ratio |")
    print("|---|---|---|---|---|")
    n = args.rows
    x = rng.standard_normal((n, 128))
    cases = [(f"distinct, below 2^{k}", rng.choice(2**k, n, replace=False) if 2**k < 2**24
              else rng.integers(0, 2**k, n)) for k in (12, 20, 31, 40)]
    cases.append(("each shared by 8 rows, below 2^20", np.repeat(rng.integers(0, 2**20, n // 8), 8)))
    for name, p in cases:
        p = np.asarray(p, dtype=np.int64)
        tp, tf = [], []
        for _ in range(args.repeats):  # interleaved: noise hits both alike
            tp += timed(lambda: plain_rope(e, x, p), 1)
            tf += timed(lambda: reference.fast.apply(e, x, p), 1)
        mp, mf = statistics.median(tp), statistics.median(tf)
        print(f"| {name} | {n} | {mp * 1e3:.1f} ms | {mf * 1e3:.1f} ms | {mf / mp:.2f}x |")


if __name__ == "__main__":
    main()
