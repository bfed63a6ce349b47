"""The tolerance model: the strict class is flat in position, the float32 class grows like p."""

import numpy as np
import pytest

from ropespec import reference
from ropespec.spec import Expect, tolerance
from ropespec.spec.dtypes import round_to, unit_roundoff


def test_strict_class_is_position_independent():
    e = Expect(angle_dtype="exact", inv_freq_dtype="exact")
    th = reference.thetas(e)
    norms = np.ones((2, e.n_pairs))
    b = tolerance.component_bound(e, np.array([1, 2**30 + 1]), th, norms)
    assert np.array_equal(b[0], b[1])
    # the derivation in spec/tolerance.py, counted here on its own: a rotated component is x_a c - x_b s with
    # exact c, s; two products, one difference and the final rounding, each within u of the pair norm: 4 u
    assert np.allclose(b[0], 4 * 2.0**-24, rtol=1e-6)


def test_float32_angle_class_grows_with_position():
    e = Expect()
    th = reference.thetas(e)
    b = tolerance.component_bound(e, np.array([999, 1048573]), th, np.ones((2, e.n_pairs)))
    # pair 0 (theta = 1): the angle term |phi| (u_A + rel_theta) dominates at large p
    assert b[1, 0] / b[0, 0] > 500
    # and it is of the size float32 code reaches at p ~ 1e6: p * u32 = 1e6 * 6e-8 = 6e-2 rad
    assert 0.05 < b[1, 0] < 0.5


def test_inv_freq_error_counts_an_inexact_exponent():
    pow64 = tolerance.ladder_formation_errors(Expect(head_dim=128))["pow"]  # 2i/128 exact in float32
    pow96 = tolerance.ladder_formation_errors(Expect(head_dim=96))["pow"]  # 2i/96 mostly not
    assert pow96.max() > 3 * pow64.max()  # ln(1e4) * (2i/r) u on top of 3u
    assert np.all(tolerance.inv_freq_relative_error(Expect(inv_freq_dtype="exact")) == 0)


def test_the_float32_class_allows_every_way_real_code_forms_its_ladder():
    """pow, the exponential of a log, a recurrence: the class allows the largest per pair. A recurrence's i products
    make its bound grow with the pair's index (ggml's theta *= theta_scale); a ladder formed in a 16-bit float is
    pow's alone, and the class of an exact ladder allows none."""
    e = Expect(head_dim=64, rope_theta=1e4)
    formed = tolerance.ladder_formation_errors(e)
    assert set(formed) == set(tolerance.LADDER_FORMATIONS)
    u = 2.0**-24
    assert formed["recurrence"][0] == 0 and formed["recurrence"][31] / u == pytest.approx(31 * (1 + 3), rel=0.2)
    assert np.array_equal(tolerance.inv_freq_relative_error(e), np.max(np.stack(list(formed.values())), axis=0))
    assert set(tolerance.ladder_formation_errors(e.replace(inv_freq_dtype="bfloat16"))) == {"pow"}


def test_model_covers_float32_transformers_style_computation():
    """Angles formed as float32 position x float32 inv_freq, as transformers does, stay inside the
    default class's bound at large odd positions; in bf16 they do not."""
    e = Expect(head_dim=128, rope_theta=5e5)
    th = reference.thetas(e)
    pos = np.array([999, 65521, 1048573, 16777213], dtype=np.int64)
    inv32 = (1.0 / (np.float32(5e5) ** (np.arange(0, 128, 2, dtype=np.float32) / np.float32(128)))).astype(np.float32)
    ang32 = (pos.astype(np.float32)[:, None] * inv32[None, :]).astype(np.float64)
    exact = pos[:, None] * th[None, :]
    err = np.abs(ang32 - exact)
    bound = tolerance.angle_error(e, pos, th)
    assert np.all(err <= bound)
    ang_bf16 = round_to(pos[:, None] * round_to(th, "bfloat16")[None, :], "bfloat16")
    assert np.any(np.abs(ang_bf16 - exact) > bound)


def test_attention_bound_stays_finite_when_the_scores_can_move_far():
    """Large q and k at large positions under a float32-angle class: the score error bound is huge, and
    exp of it overflowed (OverflowError in decode.attention-consistency). A weighted mean moves by 2 max|v| at most."""
    import numpy as np

    e = Expect(head_dim=16, dtype="float64", max_position=1 << 30)
    rng = np.random.default_rng(0)
    q, k, v = 1e3 * rng.standard_normal((4, 16)), 1e3 * rng.standard_normal((4, 16)), rng.standard_normal((4, 16))
    b = tolerance.attention_bound(e, q, k, v, np.array([2**29, 2**29 + 1, 2**29 + 2, 2**29 + 3]))
    assert np.isfinite(b) and b <= 2.0 * np.abs(v).max() * (1 + 1e-12) + 1e-12


def test_the_fast_reference_is_used_only_where_its_error_is_far_below_the_bound():
    assert tolerance.fast_reference_suffices(Expect(dtype="float32"))
    assert tolerance.fast_reference_suffices(Expect(dtype="float64"))  # float32 angles: 2 u32 >> 2 ulp of float64
    assert tolerance.fast_reference_suffices(Expect(dtype="bfloat16", angle_dtype="exact", inv_freq_dtype="exact"))
    assert not tolerance.fast_reference_suffices(Expect(dtype="float64", angle_dtype="exact", inv_freq_dtype="exact"))
    assert not tolerance.fast_reference_suffices(Expect(dtype="float64", angle_dtype="float64", inv_freq_dtype="float64"))


def test_the_attention_factor_read_off_a_correct_float64_implementation_passes():
    """Seed 11 drew yarn with factor 40 at d = 110: the shipped float64 numpy implementation's factor,
    read off as a mean of 55 pair norms, was 6 u from the reference and failed against a bound without
    the read-off's own rounding (tolerance.norm_readoff_error)."""
    from ropespec.implementations import load_implementation
    from ropespec.properties.framework import all_properties, run_property

    prop = next(p for p in all_properties() if p.name == "attention_factor")
    impl = load_implementation(target="ropespec.implementations.numpy_rope:make", array="numpy", dtype="float64", name="numpy")
    r = run_property(prop, impl, profile="dev", seed_value=11)
    assert r.status == "pass", r.message
