"""Every bound is tight: the worst legal computation reaches at least 1/LOOSE of it.

A bound that is too loose passes broken code, and nothing else would notice: the zoo's gross members fail
their bounds by 10^3 and more. Each test here emulates the worst computation the tolerance model allows
(angles and inverse frequencies in the class's dtype, cos/sin in float32, every product and sum rounded to
the output dtype), measures its error against the bound, and requires 1/LOOSE <= worst / bound <= 1.
``tests/test_error_model.py`` does the same for the component bound (conformance).
"""

from __future__ import annotations

import numpy as np
import pytest

from ropespec import reference
from ropespec.spec import Expect, tolerance
from ropespec.spec.dtypes import round_to
from tests import ladders

LOOSE = 5.0  # measured worst / bound: norm 0.26 to 0.33, same-angle 0.24 to 0.26 (float32, bfloat16, float16)
DTYPES = ["float32", "bfloat16", "float16"]


def _legal_rotation(e: Expect, x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The default class's worst legal computation, half convention: float32 inverse frequencies (the worst legal
    ladder, tests/ladders.py) and angles, float32 cos/sin, products and sums rounded to the output dtype."""
    th = ladders.worst_ladder(e, "float32")
    phi = round_to(pos[:, None].astype(np.float64) * th[None, :], "float32")
    c, s = round_to(np.cos(phi), "float32"), round_to(np.sin(phi), "float32")
    h = e.head_dim // 2
    a, b = x[:, :h], x[:, h:]
    d = e.dtype
    ya = round_to(round_to(a * c, d) - round_to(b * s, d), d)
    yb = round_to(round_to(a * s, d) + round_to(b * c, d), d)
    return np.concatenate([ya, yb], axis=1)


def _inputs(e: Expect, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return round_to(rng.standard_normal((n, e.head_dim)), e.dtype), rng.integers(0, e.max_position, n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_bound_is_tight(dtype):
    e = Expect(head_dim=64, dtype=dtype, max_position=1 << 20)
    x, pos = _inputs(e, 4000, 0)
    y = _legal_rotation(e, x, pos)
    nx, ny = np.hypot(x[:, :32], x[:, 32:]), np.hypot(y[:, :32], y[:, 32:])
    ratio = float(np.max(np.abs(ny - nx) / tolerance.norm_bound(e, nx)))
    assert 1 / LOOSE <= ratio <= 1.0, ratio


@pytest.mark.parametrize("dtype", DTYPES)
def test_same_angle_bound_is_tight(dtype):
    """Linearity: f(alpha x + beta y) against alpha f(x) + beta f(y) with the same angles; the rounding of
    z = alpha x + beta y to the dtype (rho) is rotated exactly and taken out, as the property does."""
    e = Expect(head_dim=64, dtype=dtype, max_position=1 << 20)
    x, pos = _inputs(e, 2000, 1)
    y, _ = _inputs(e, 2000, 2)
    al, be = 0.5, 3.0
    z = round_to(al * x + be * y, dtype)
    fx, fy, fz = (_legal_rotation(e, v, pos) for v in (x, y, z))
    rho = z - (al * x + be * y)
    rotated_rho = reference.fast.apply(e.replace(dtype="float64"), rho, pos)
    err = np.abs(fz - (al * fx + be * fy) - rotated_rho)
    same = lambda v: tolerance.same_angle_bound(e, tolerance.convention_free_norm(v))  # noqa: E731
    ratio = float(np.max(err / (same(z) + al * same(x) + be * same(y))))
    assert 1 / LOOSE <= ratio <= 1.0, ratio


LOOSE_ATTENTION = 500.0  # measured 0.006 to 0.008 (float32 and float64): a worst case summed over pairs and keys


@pytest.mark.parametrize("dtype, top", [("float32", 8192), ("float32", 64), ("float64", 8192)])
def test_attention_bound_is_not_vacuous(dtype, top):
    """Causal attention whose q and k are rotated the default class's worst legal way, against the exact
    attention: the error stays within the bound and reaches a stated fraction of it. The bound adds the
    worst case over pairs and keys, so random inputs reach about 1/130 of it; a bound 10 times looser, or
    an absolute floor in place of the rounding of the mean (1e-12, then 1e-3, survived mutation), does not."""
    from ropespec.reference.encodings import attention

    rng = np.random.default_rng(0)
    e = Expect(head_dim=16, dtype=dtype, max_position=top)
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(2, 7))
        start = int(rng.integers(0, top - n))
        pos = np.arange(start, start + n)
        q, k, v = (rng.standard_normal((n, 16)) for _ in range(3))
        qr, kr = _legal_rotation(e.replace(dtype="float64"), q, pos), _legal_rotation(e.replace(dtype="float64"), k, pos)
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), qr @ kr.T / 4.0, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        got = round_to((w / w.sum(axis=1, keepdims=True)) @ v, dtype)
        err = float(np.max(np.abs(got - attention(e, q, k, v, pos, True))))
        worst = max(worst, err / tolerance.attention_bound(e, q, k, v, pos))
    assert 1 / LOOSE_ATTENTION <= worst <= 1.0, worst


@pytest.mark.parametrize("d", [16, 64])
def test_sinusoidal_bound_is_tight(d):
    """sinusoidal.*'s per-component bound (a unit pair's component bound) against a float32-class encoding:
    positions, frequencies (the worst legal ladder), angles and sin/cos rounded to float32. Measured 0.38 and 0.45."""
    from ropespec.properties.numerics import per_dim
    from ropespec.reference.encodings import sinusoidal
    from ropespec.spec.angles import sinusoidal_layout

    e = Expect(head_dim=d, dtype="float64", max_position=1 << 20, convention="interleaved")
    pos = np.random.default_rng(0).integers(0, 1 << 20, 2000)
    th = ladders.worst_ladder(e, "float32")
    ang = round_to(round_to(pos.astype(np.float64), "float32")[:, None] * th[None], "float32")
    y = sinusoidal_layout(round_to(np.sin(ang), "float32"), round_to(np.cos(ang), "float32"), e.convention)
    tau = per_dim(e, tolerance.component_bound(e, pos, reference.thetas(e), np.ones((len(pos), e.n_pairs))))
    ratio = float(np.max(np.abs(y - sinusoidal(e, pos)) / tau))
    assert 1 / LOOSE <= ratio <= 1.0, ratio


LOOSE_SCALING = 8.0  # measured 0.26 (d = 64) and 0.26 (d = 128)


@pytest.mark.parametrize("d", [64, 128])
def test_scaling_frequency_tolerance_is_tight(d):
    """The scaling properties' allowance on a measured frequency, against a float32 llama3 table used the
    float32 way (positions, table and angles rounded to float32), read off by the probe."""
    from ropespec.properties import probe
    from ropespec.properties.test_scaling import _rel_tol

    s = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192}
    e = Expect(head_dim=d, rope_theta=5e5, dtype="float64", max_position=131072, rope_scaling=s)
    th32 = ladders.worst_ladder(e, "float32")

    def f(x, positions):
        ang = round_to(round_to(np.asarray(positions, dtype=np.float64), "float32")[:, None] * th32[None], "float32")
        c, sn = np.cos(ang), np.sin(ang)
        a, b = x[:, : d // 2], x[:, d // 2 :]
        return np.concatenate([a * c - b * sn, a * sn + b * c], axis=1)

    m = probe.measure(f, e)
    exact = reference.thetas(e)
    ratio = float(np.max(np.abs(m.thetas - exact) / (_rel_tol(e, m) * exact)))
    assert 1 / LOOSE_SCALING <= ratio <= 1.0, ratio
