"""The shipped implementations and ropespec.reference.fast at the accuracy limit, against the mpmath reference.

spec/angles.py's double-double numerics are shared by the fast oracle (ropespec.reference.fast) and by the shipped numpy and
torch implementations: both are checked here against mpmath, which shares nothing with them, so neither is ever
trusted because it agrees with the other.

Errors are measured per component in units of the pair's norm times the dtype's machine epsilon
(one ulp at the scale of the pair): float64 within 2 of them at every position up to 2**40,
float32 within 2 up to 2**31.
"""

import numpy as np
import pytest

from ropespec import reference
from ropespec.implementations import load_implementation
from ropespec.properties.numerics import pair_norms, per_dim
from ropespec.spec import Expect, methods
from ropespec.spec.dtypes import MANTISSA_BITS, round_to

POS_40 = [0, 1, 999, 65521, 1048573, 16777213, 2**31 - 1, 2**35 + 1, 2**40 - 3, 2**40 - 1]
POS_31 = [0, 1, 999, 65521, 1048573, 16777213, 2**28 + 3, 2**31 - 1]


def _ulps_of_pair_norm(e: Expect, x, got, positions) -> float:
    exact = reference.apply(e, x, positions)
    eps = 2.0 ** (1 - MANTISSA_BITS[e.dtype])
    scale = per_dim(e, pair_norms(e, x), passthrough=np.abs(x)) * eps
    return float(np.max(np.abs(got - exact) / scale))


def _inputs(e, positions, seed=0):
    x = round_to(np.random.default_rng(seed).standard_normal((len(positions), e.head_dim)), e.dtype)
    return x, np.array(positions, dtype=np.int64)


@pytest.mark.parametrize("target, array", [("ropespec.implementations.numpy_rope:make", "numpy"),
                                           ("ropespec.implementations.torch_rope:make", "torch")])
@pytest.mark.parametrize("convention", ["half", "interleaved", "rope_interleave"])
@pytest.mark.parametrize("base", [1e4, 5e5, 1e6])
def test_float64_within_2_ulp_to_2_40(target, array, convention, base):
    if array == "torch":
        pytest.importorskip("torch")
    e = Expect(head_dim=64, rope_theta=base, convention=convention, dtype="float64", max_position=2**40)
    x, pos = _inputs(e, POS_40)
    f = load_implementation(target, array=array, dtype="float64").bind(e)
    assert _ulps_of_pair_norm(e, x, f(x, pos), pos) <= 2.0


@pytest.mark.parametrize("target, array", [("ropespec.implementations.numpy_rope:make", "numpy"),
                                           ("ropespec.implementations.torch_rope:make", "torch")])
def test_float32_within_2_ulp_to_2_31(target, array):
    if array == "torch":
        pytest.importorskip("torch")
    e = Expect(head_dim=128, rope_theta=5e5, dtype="float32", max_position=2**31)
    x, pos = _inputs(e, POS_31, seed=1)
    f = load_implementation(target, array=array, dtype="float32").bind(e)
    assert _ulps_of_pair_norm(e, x, f(x, pos), pos) <= 2.0


def test_reference_fast_agrees_with_mpmath_to_2_53():
    e = Expect(head_dim=32, rotary_dim=24, rope_theta=1e6, dtype="float64")
    x, pos = _inputs(e, POS_40 + [2**50 + 7, 2**53 - 1], seed=2)
    assert _ulps_of_pair_norm(e, x, reference.fast.apply(e, x, pos), pos) <= 2.0


#: every scaling method's canonical examples (ropespec.spec.methods), for a rotary of 12 pairs and an original length of 4096
_SCALED = {name: d for m in methods.REGISTRY.values() for name, d in m.examples(12, 4096).items()}

@pytest.mark.parametrize("name", list(_SCALED))
def test_reference_fast_agrees_with_mpmath_for_every_scaling_type(name):
    """ropespec.reference.fast is README's oracle for users' tests: every scaling type, its attention factor, and the
    sequence length (max(positions) + 1) of dynamic and longrope, on both sides of the original length and
    out to 2^53. Each call is one sequence, as in the implementations."""
    e = Expect(head_dim=32, rotary_dim=24, rope_theta=5e5, dtype="float64", max_position=2**53,
               rope_scaling=_SCALED[name])
    g = reference.attention_factor(e)
    for calls in ([0, 1, 999, 4095], [0, 1, 999, 4096], [0, 4097, 65521], POS_40, [5, 2**50 + 7, 2**53 - 1]):
        x, pos = _inputs(e, calls, seed=3)
        exact = reference.apply(e, x, pos)
        eps = 2.0**-52
        scale = per_dim(e, g * pair_norms(e, x), passthrough=np.abs(x)) * eps
        assert float(np.max(np.abs(reference.fast.apply(e, x, pos) - exact) / scale)) <= 2.0, (name, calls)


def test_naive_float64_angle_is_not_accurate_at_2_40():
    """The bound above is not vacuous: a plain float64 product p * theta misses it by orders of magnitude."""
    e = Expect(head_dim=64, rope_theta=5e5, dtype="float64")
    x, pos = _inputs(e, POS_40)
    from ropespec.implementations.zoo._base import build

    assert _ulps_of_pair_norm(e, x, build(e)(x, pos), pos) > 1e6


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_fast_sinusoidal_agrees_with_mpmath(convention):
    from ropespec.reference.encodings import sinusoidal, sinusoidal_fast

    e = Expect(head_dim=32, rope_theta=1e4, convention=convention, dtype="float64")
    pos = np.array(POS_40 + [2**50 + 7], dtype=np.int64)
    assert np.max(np.abs(sinusoidal(e, pos) - sinusoidal_fast(e, pos))) <= 2.0**-52


@pytest.mark.parametrize("positions", [[2**40 - 1, 7, 0, 65521, 7, 2**40 - 1, 3, 0],  # unsorted, repeated
                                       [5, 3, 1, 4, 2]])  # unsorted, distinct
def test_fast_reference_rows_keep_their_own_position(positions):
    """ropespec.reference.fast computes one table row per distinct position: every row still gets its own, in any
    order, repeated or not, within 2 ulp of the pair norm."""
    e = Expect(head_dim=64, rope_theta=5e5, convention="interleaved", dtype="float64")
    x, pos = _inputs(e, positions, seed=4)
    assert _ulps_of_pair_norm(e, x, reference.fast.apply(e, x, pos), pos) <= 2.0
