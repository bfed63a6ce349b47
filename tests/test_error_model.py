"""The error model of spec/tolerance.py against mpmath: each bound holds on adversarial inputs and is
not loose by more than a small factor (the worst error reaches at least 1/LOOSE of the bound).

Each class is realised by emulating, exactly, an implementation of that class: rounding to the dtype
after every operation (float64 holds every product and sum of two float32/float16/bfloat16 values
exactly, so round_to after a float64 operation is that dtype's arithmetic).
"""

import numpy as np
import pytest

from ropespec import reference
from ropespec.properties.numerics import pair_norms, per_dim
from ropespec.spec import Expect, tolerance
from ropespec.spec.dtypes import round_to
from tests import ladders

LOOSE = 4.0  # measured worst error / bound: 0.33 to 0.62 across these tests


def _positions(limit, n=200, seed=0):
    rng = np.random.default_rng(seed)
    p = np.unique(np.concatenate([
        rng.integers(1, limit // 2, n) * 2 + 1,  # odd: p * theta is not exact
        np.geomspace(3, limit - 1, 40).astype(np.int64) | 1,
    ]))
    return p[p < limit]


def _exact_cos_sin(e, positions):
    cs = [reference.cos_sin(e, int(p)) for p in positions]
    c = np.array([[float(v) for v in row[0]] for row in cs])
    s = np.array([[float(v) for v in row[1]] for row in cs])
    return c, s


def _ratio(e, x, y, positions, bound_expect):
    """Worst error / bound, over the elements whose allowed angle error is below 0.1 rad: beyond that
    the bound is capped at 2 ||x|| (any rotation is within it) and would be trivially tight."""
    exact = reference.apply(e, x, positions)
    th = reference.thetas(e)
    bound = per_dim(e, tolerance.component_bound(bound_expect, positions, th, pair_norms(e, x)))
    informative = per_dim(e, tolerance.angle_error(bound_expect, positions, th)) < 0.1
    r = np.abs(y - exact)[:, : e.rotary_dim] / bound[:, : e.rotary_dim]
    return float(r[informative[:, : e.rotary_dim]].max())


def _rotate(e, x, c, s, dtype):
    a, b = (np.array(ix) for ix in zip(*e.pairs()))
    rd = lambda v: round_to(v, dtype)
    y = x.copy()
    xa, xb = x[:, a], x[:, b]
    y[:, a] = rd(rd(xa * c) - rd(xb * s))
    y[:, b] = rd(rd(xa * s) + rd(xb * c))
    return y


def _hf_inv_freq(e, dtype):
    """The worst legal ladder of the class in ``dtype`` (tests/ladders.py: a recurrence where the class admits one,
    transformers' 1 / base ** (2i / r) otherwise), every step rounded to ``dtype``."""
    return ladders.worst_ladder(e, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_strict_bound_rotation_in_the_output_dtype(dtype):
    e = Expect(head_dim=64, rope_theta=5e5, dtype=dtype, angle_dtype="exact", inv_freq_dtype="exact")
    pos = _positions(2**31)
    rng = np.random.default_rng(1)
    x = round_to(rng.standard_normal((len(pos), 64)) * 2.0 ** rng.integers(-4, 5, (len(pos), 1)), dtype)
    c, s = _exact_cos_sin(e, pos)
    y = _rotate(e, x, round_to(c, dtype), round_to(s, dtype), dtype)
    ratio = _ratio(e, x, y, pos, e)
    assert 1 / LOOSE <= ratio <= 1.0, ratio


@pytest.mark.parametrize("angle_dtype, limit", [("float32", 2**31), ("bfloat16", 2**20), ("float16", 60000)])
@pytest.mark.parametrize("head_dim", [128, 96])
def test_angle_and_inv_freq_bound(angle_dtype, limit, head_dim):
    """Angles formed as round(round(p) * theta~) in the dtype, theta~ by transformers' recipe in the same dtype."""
    e = Expect(head_dim=head_dim, rope_theta=1e4, dtype="float64", angle_dtype=angle_dtype, inv_freq_dtype=angle_dtype)
    pos = _positions(limit)
    rd = lambda v: round_to(v, angle_dtype)
    theta = _hf_inv_freq(e, angle_dtype)
    phi = rd(rd(pos.astype(np.float64))[:, None] * theta[None, :])
    c, s = rd(np.cos(phi)), rd(np.sin(phi))  # cos/sin evaluated in the angle dtype
    x = np.random.default_rng(2).standard_normal((len(pos), head_dim))
    y = _rotate(e, x, c, s, "float64")
    ratio = _ratio(e, x, y, pos, e)
    assert 1 / LOOSE <= ratio <= 1.0, ratio


@pytest.mark.parametrize("inv_dtype", ["float32", "bfloat16"])
def test_inv_freq_bound_alone(inv_dtype):
    """An exact product p * theta~ of a theta~ rounded in ``inv_dtype``: the error is p |d theta|."""
    e = Expect(head_dim=96, rope_theta=5e5, dtype="float64", angle_dtype="exact", inv_freq_dtype=inv_dtype)
    pos = _positions(2**24)
    theta = _hf_inv_freq(e, inv_dtype)
    phi = pos.astype(np.float64)[:, None] * theta[None, :]  # exact: 24-bit p times a <= 24-bit theta
    x = np.random.default_rng(3).standard_normal((len(pos), 96))
    y = _rotate(e, x, np.cos(phi), np.sin(phi), "float64")
    ratio = _ratio(e, x, y, pos, e)
    assert 1 / LOOSE <= ratio <= 1.0, ratio


@pytest.mark.parametrize("target", ["ggml", "mlx"])
def test_real_float32_ladders_hold_the_float32_class(target, checked):
    """ggml's recurrence (theta *= theta_scale, one float32 product a pair) and mlx's exponential of a log hold the
    float32 class at every property (the class's ladder bound covers each way real float32 code forms its ladder);
    ggml's failed rope.conformance 1.1 to 7.6 times a bound of pow's ladder alone."""
    report = checked(f"tests/fixtures/ladders.py:{target}", '{"head_dim": 64, "rope_theta": 10000}', seed=1,
                     invariants=["rope.conformance"])
    assert report.results and all(r.status == "pass" for r in report.results), \
        [(r.property, r.status, r.message[:200]) for r in report.results]
