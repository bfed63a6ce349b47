"""The mpmath reference is exact: it agrees with an independent 100-digit evaluation to 0.5 ulp."""

import math

import mpmath
import numpy as np
import pytest

import reference
from reference import rope as ref_rope
from spec import Expect

POSITIONS = [0, 1, 2, 999, 65521, 1048573, 16777213, 2**31 - 1, 2**35 + 12345, 2**40 - 1, 2**40]


def _exact_100_digits(e: Expect, x: np.ndarray, positions) -> np.ndarray:
    """An independent evaluation at 100 significant digits, with mpmath's high-level API."""
    out = x.copy()
    with mpmath.workdps(100):
        base = mpmath.mpf(e.rope_theta)
        for row, p in enumerate(positions):
            for i, (a, b) in enumerate(e.pairs()):
                ang = p * base ** (-mpmath.mpf(2 * i) / e.rotary_dim)
                c, s = mpmath.cos(ang), mpmath.sin(ang)
                xa, xb = mpmath.mpf(float(x[row, a])), mpmath.mpf(float(x[row, b]))
                out[row, a] = _nearest(xa * c - xb * s)
                out[row, b] = _nearest(xa * s + xb * c)
    return out


def _nearest(v) -> float:
    return mpmath.libmp.to_float(v._mpf_, rnd="n")


@pytest.mark.parametrize("convention", ["half", "interleaved"])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6])
def test_reference_within_half_ulp_of_100_digits(convention, base):
    e = Expect(head_dim=16, rotary_dim=12, rope_theta=base, convention=convention, dtype="float64")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((len(POSITIONS), 16))
    pos = np.array(POSITIONS, dtype=np.int64)
    got = reference.apply(e, x, pos)
    exact = _exact_100_digits(e, x, POSITIONS)
    # both are rounded to nearest from far more than 53 bits, so they agree bit for bit
    assert np.array_equal(got, exact)
    assert np.array_equal(got[:, 12:], x[:, 12:])  # pass-through dims are copied


def test_working_precision_grows_with_position():
    assert ref_rope.working_prec(1) < ref_rope.working_prec(2**40)
    assert ref_rope.working_prec(2**40) >= 53 + 40 + ref_rope.GUARD_BITS


def test_thetas_are_correctly_rounded():
    e = Expect(head_dim=128, rope_theta=5e5)
    th = reference.thetas(e)
    assert th[0] == 1.0
    with mpmath.workdps(60):
        for i in (1, 17, 63):
            assert th[i] == _nearest(mpmath.mpf(5e5) ** (-mpmath.mpf(2 * i) / 128))
    assert math.isclose(reference.thetas(Expect(rope_theta=1e4))[1], 8.6596e-1, rel_tol=1e-5)  # HF's oracle value


def test_cos_sin_memoised_per_position():
    ref_rope.cache_clear()
    e = Expect(head_dim=8, rope_theta=12345.0)
    x = np.ones((6, 8))
    reference.apply(e, x, np.array([3, 3, 3, 5, 5, 3]))
    info = ref_rope._cos_sin_raw.cache_info()
    assert info.misses == 2  # two distinct positions: 2 * r/2 cos-sin evaluations, not 6 * r/2


def test_reference_rejects_unimplemented_scaling():
    e = Expect(rope_scaling={"rope_type": "linear", "factor": 2.0})
    with pytest.raises(NotImplementedError, match="linear"):
        reference.apply(e, np.ones((1, 128)), np.array([1]))
