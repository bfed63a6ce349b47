"""One numpy multi-axis RoPE that zoo members bend in exactly one place each.

With no keywords it computes the expectation's multi-axis RoPE in float64: pair j turns by c[a(j)] theta_j, a(j) its
axis, c its coordinate ((p + axes_offset) x axes_scale, p itself without them) and theta_j its ladder's frequency.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ropespec.spec.expectation import Expect


def build(
    expect: Expect,
    *,
    pair_axes: Callable[[Expect], tuple[int, ...]] | None = None,
    ladder: Callable[[Expect], tuple[tuple[int, int], ...]] | None = None,
    positions_map: Callable[[np.ndarray], np.ndarray] | None = None,
):
    """A multi-axis RoPE of ``expect`` with one bug injected: ``pair_axes(e)`` the axis each pair reads (correct:
    e.pair_axes()), ``ladder(e)`` each pair's (i, R) with theta = base^(-2i/R) (correct: e.ladder()),
    ``positions_map(p)`` applied to the (n, A) positions first."""
    if expect.dtype not in ("float64", "float32"):
        raise NotImplementedError(f"zoo members compute float64 and float32, not {expect.dtype}")
    if not expect.multi_axis:
        raise NotImplementedError("a multi-axis zoo member needs a multi-axis expectation")
    axes = list((pair_axes or Expect.pair_axes)(expect))
    theta = np.array([expect.rope_theta ** (-2.0 * i / R) for i, R in (ladder or Expect.ladder)(expect)])
    a, b, oa, ob = expect.pair_index()
    out_dtype = np.dtype(expect.dtype)

    def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        xf = np.asarray(x, dtype=np.float64)
        p = np.asarray(positions_map(np.asarray(positions)) if positions_map else positions, dtype=np.float64)
        phi = expect.coordinate(p[:, axes]) * theta[None, :]  # (p + offset) x scale, where the expectation says so
        c, s = np.cos(phi), np.sin(phi)
        out = xf.copy()
        xa, xb = xf[:, a], xf[:, b]
        out[:, oa], out[:, ob] = xa * c - xb * s, xa * s + xb * c
        return out.astype(out_dtype)

    return rope


def chunked(e: Expect) -> tuple[int, ...]:
    """The sections as chunks, whatever mrope_interleaved says."""
    return e.replace(mrope_interleaved=False).pair_axes()


def interleaved(e: Expect) -> tuple[int, ...]:
    """Qwen3-VL's interleaved rule on e's sections, valid for them or not: pair j on axis j mod A when that is not 0 and
    j < A sections[j mod A], else on axis 0."""
    A, sec = e.n_axes, e.mrope_section
    return tuple(j % A if j % A and j < A * sec[j % A] else 0 for j in range(e.n_pairs))


def per_axis_ladder(e: Expect) -> tuple[tuple[int, int], ...]:
    """Each axis its own ladder theta^(-2k/d_a), d_a twice its pairs."""
    axes = e.pair_axes()
    seen: dict[int, int] = {}
    out = []
    for a in axes:
        out.append((seen.get(a, 0), 2 * axes.count(a)))
        seen[a] = seen.get(a, 0) + 1
    return tuple(out)
