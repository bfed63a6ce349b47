"""How much faster reference.fast is than the mpmath reference (cold caches, distinct positions).

    python benchmarks/reference_speed.py [--rows N] [--repeats K]

Prints the median wall time of each over K repeats and their ratio. Both compute RoPE of N rows of a
128-dim head (base 5e5) at N distinct odd positions up to 2**40, cold caches for mpmath.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import reference
from reference import rope as ref_rope
from spec import Expect


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    e = Expect(head_dim=128, rope_theta=5e5, dtype="float64")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, 128))
    pos = rng.integers(0, 2**39, args.rows) * 2 + 1
    slow, fast = [], []
    for _ in range(args.repeats):
        ref_rope.cache_clear()
        t = time.perf_counter()
        reference.apply(e, x, pos)
        slow.append(time.perf_counter() - t)
        t = time.perf_counter()
        reference.fast.apply(e, x, pos)
        fast.append(time.perf_counter() - t)
    ms, mf = statistics.median(slow), statistics.median(fast)
    print(f"{args.rows} rows x 128 dims, median of {args.repeats}: mpmath {ms * 1e3:.1f} ms, "
          f"fast {mf * 1e3:.3f} ms, ratio {ms / mf:.0f}x")


if __name__ == "__main__":
    main()
