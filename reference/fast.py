"""A fast float64 oracle for RoPE, validated against the mpmath reference (tests/test_accuracy.py).

Orders of magnitude faster than :func:`reference.apply` (it is vectorised numpy, see
``benchmarks/reference_speed.py``), and within about 2 ulp of the pair norm at every position below
2**53: the angle is formed and reduced in double-double arithmetic (:mod:`ropespec.spec.angles`). Use it to
generate expected values in your own tests:

    >>> from reference import fast
    >>> from spec import Expect
    >>> y = fast.apply(Expect(head_dim=128, rope_theta=5e5), x, positions)
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.angles import cos_sin, pair_cos_sin, pair_hi_lo
from ropespec.spec.definitions import rotate
from ropespec.spec.expectation import Expect


def apply(expect: Expect, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """RoPE of rows ``x`` (n, head_dim) at integer ``positions`` (n,), or (n, A) position vectors of a multi-axis
    RoPE (whose (n,) positions are text tokens, every axis at p), in float64."""
    x = np.asarray(x, dtype=np.float64)
    positions = np.asarray(positions)
    _check_shapes(expect, x.shape, positions.shape)
    if positions.size and np.abs(positions).max() >= 2**53:
        raise ValueError("positions must be below 2**53")
    seq_len = int(positions.max()) + 1 if positions.size else None
    # one table row per distinct position (several vectors at one position share it)
    distinct, row = np.unique(positions, return_inverse=True, axis=0)
    if len(distinct) < len(positions):
        c, s, g = pair_cos_sin(expect, distinct, seq_len)
        row = row.reshape(-1)
        c, s = c[row], s[row]
    else:
        c, s, g = pair_cos_sin(expect, positions, seq_len)
    if g != 1.0:
        c, s = g * c, g * s
    return _rotate(expect, x, c, s, x.copy())


def _check_shapes(expect: Expect, x_shape: tuple, p_shape: tuple) -> None:
    n = x_shape[0] if len(x_shape) == 2 else -1
    if len(x_shape) != 2 or x_shape[1] != expect.head_dim or not expect.accepts_positions(p_shape, n):
        what = "(n, A)" if expect.multi_axis else "(n,)"
        raise ValueError(f"x must be (n, {expect.head_dim}) and positions {what}, got {tuple(x_shape)} and "
                         f"{tuple(p_shape)}")


def apply_torch(expect: Expect, x, positions):
    """:func:`apply` in torch, on the device of ``x`` (float64 tensors; the same double-double angles, the
    same 2-ulp guarantee): for comparisons where the implementation's outputs are, a GPU."""
    import torch

    if positions.numel() and int(positions.abs().max()) >= 2**53:
        raise ValueError("positions must be below 2**53")
    hi, lo, g = pair_hi_lo(expect, int(positions.max()) + 1 if positions.numel() else None)
    _check_shapes(expect, tuple(x.shape), tuple(positions.shape))
    dev = x.device
    p = positions.to(torch.float64)
    p = p[:, list(expect.pair_axes())] if expect.multi_axis and p.ndim == 2 else p[:, None]
    if expect.axes_offset is not None:  # the scale is in the frequencies (pair_hi_lo)
        p = p + torch.from_numpy(expect.pair_offsets()).to(dev)
    c, s = cos_sin(p, torch.from_numpy(hi).to(dev), torch.from_numpy(lo).to(dev), xp=torch)
    if g != 1.0:
        c, s = g * c, g * s
    return _rotate(expect, x, c, s, x.clone())


def _rotate(expect: Expect, x, c, s, out):
    a, b, oa, ob = expect.pair_index()
    out[:, oa], out[:, ob] = rotate(x[:, a], x[:, b], c, s)
    return out
