"""The mpmath reference is exact: it agrees with an independent 100-digit evaluation to 0.5 ulp."""

import math

import mpmath
import numpy as np
import pytest

from ropespec import reference
from ropespec.reference import fast
from ropespec.reference import rope as ref_rope
from ropespec.spec import Expect

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


def _scaled(rope_scaling, **kw):
    return Expect(**{"head_dim": 128, "rope_theta": 1e4, "max_position": 2048, **kw}, rope_scaling=rope_scaling)


def test_scaling_oracle_values_from_transformers_tests():
    """Values from transformers' own tests (tests/utils/test_modeling_rope_utils.py, LlamaConfig defaults)."""
    th = reference.thetas(_scaled({"rope_type": "dynamic", "factor": 10.0}), seq_len=16384)
    assert math.isclose(th[1], 8.0931e-1, rel_tol=1e-4) and math.isclose(th[63], 1.6265e-6, rel_tol=1e-4)
    assert np.array_equal(reference.thetas(_scaled({"rope_type": "dynamic", "factor": 10.0}), seq_len=2048),
                          reference.thetas(Expect(rope_theta=1e4)))  # default up to the original length
    yarn = reference.thetas(_scaled({"rope_type": "yarn", "factor": 10.0}))
    for i, v in ((16, 1.0e-1), (17, 8.3479e-2), (40, 4.3007e-4), (41, 2.7384e-4)):
        assert math.isclose(yarn[i], v, rel_tol=1e-4), (i, yarn[i])
    for s, g in ((4, 1.13863), (32, 1.34657), (40, 1.36889)):
        assert math.isclose(reference.attention_factor(_scaled({"rope_type": "yarn", "factor": float(s)})), g, rel_tol=1e-5)
    phi3 = Expect(head_dim=96, max_position=131072, rope_scaling={
        "rope_type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48,
        "original_max_position_embeddings": 4096})
    assert math.isclose(reference.attention_factor(phi3), 1.19024, rel_tol=1e-5)
    assert np.allclose(reference.thetas(phi3, seq_len=4097), reference.thetas(phi3, seq_len=4096) / 2, rtol=1e-15)
    ntk = reference.thetas(_scaled({"rope_type": "ntk", "factor": 8.0}))
    assert ntk[0] == 1.0 and math.isclose(ntk[-1], 1e4 ** (-126 / 128) / 8, rel_tol=1e-14)
    assert math.isclose(1e4 * 8 ** (128 / 126), 82684.6, rel_tol=1e-6)


def test_llama3_bands():
    e = Expect(rope_theta=5e5, rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    t, d = reference.thetas(e), reference.thetas(Expect(rope_theta=5e5))
    unchanged = np.flatnonzero(t == d)
    divided = np.flatnonzero(np.isclose(t, d / 8, rtol=1e-15, atol=0))
    assert (len(unchanged), len(divided)) == (29, 29)
    assert list(range(29, 35)) == sorted(set(range(64)) - set(unchanged) - set(divided))


def test_llama3_smoothing_band_matches_metas_formula():
    """The band's values, not only its size: Meta's apply_scaling (llama-models, reference code), written out
    here independently of spec/scaling.py, in float64."""
    import math

    s = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192}
    e = Expect(rope_theta=5e5, rope_scaling=s)
    freqs = 5e5 ** (-np.arange(0, 128, 2) / 128)
    low_wavelen, high_wavelen = 8192 / 1.0, 8192 / 4.0
    want = []
    for f in freqs:
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            want.append(f)
        elif wavelen > low_wavelen:
            want.append(f / 8.0)
        else:
            smooth = (8192 / wavelen - 1.0) / (4.0 - 1.0)
            want.append((1 - smooth) * f / 8.0 + smooth * f)
    got = reference.thetas(e)
    band = slice(29, 35)
    assert np.allclose(got[band], np.array(want)[band], rtol=1e-13, atol=0)
    assert np.allclose(got, want, rtol=1e-13, atol=0)


def test_attention_factor_scales_the_output():
    e = _scaled({"rope_type": "yarn", "factor": 4.0})
    x = np.random.default_rng(0).standard_normal((3, 128))
    y = reference.apply(e, x, np.array([0, 5, 1000]))
    assert np.allclose(y[0], 1.1386294361119891 * x[0], rtol=1e-15)


@pytest.mark.parametrize("apply", [reference.apply, fast.apply], ids=["mpmath", "fast"])
def test_rope_interleave_is_the_interleaved_rotation_written_in_the_half_layout(apply):
    """DeepSeek-V3's layout (transformers' rope_interleave): pair (2i, 2i + 1) turns at theta_i and lands on
    (i, i + r/2); pass-through dims stay where they are."""
    e = Expect(head_dim=12, rotary_dim=8, convention="rope_interleave", dtype="float64")
    x = np.random.default_rng(3).standard_normal((4, 12))
    pos = np.array([0, 1, 77, 65521])
    inter = apply(e.replace(convention="interleaved"), x, pos)
    got = apply(e, x, pos)
    r = 8
    assert np.array_equal(got[:, : r // 2], inter[:, 0:r:2])
    assert np.array_equal(got[:, r // 2 : r], inter[:, 1:r:2])
    assert np.array_equal(got[:, r:], x[:, r:])


@pytest.mark.parametrize("convention", ["half", "interleaved", "rope_interleave"])
@pytest.mark.parametrize("rope_scaling", [None, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
                                          {"rope_type": "ntk", "factor": 2.0}])
def test_references_are_the_definitions(convention, rope_scaling):
    """ropespec.spec.definitions.encode, the object the proofs are about, evaluated in mpmath at 120 bits with
    ropespec.spec.scaling's frequencies, is what both references compute: one definition, proven and used."""
    from ropespec.spec import definitions, tables

    e = Expect(head_dim=12, rotary_dim=8, convention=convention, rope_scaling=rope_scaling, max_position=256)
    rng = np.random.default_rng(3)
    x, pos = rng.standard_normal((6, 12)), np.array([0, 1, 7, 100, 255, 3])
    with mpmath.workprec(120):
        th, gain = tables.frequencies(e), tables.attention_factor(e)
        want = np.array([[float(v) for v in definitions.encode(e, [mpmath.mpf(float(v)) for v in row],
                                                               [int(p) * t for t in th], mpmath.cos, mpmath.sin, gain)]
                         for row, p in zip(x, pos)])
    scale = np.abs(x).max()
    assert np.max(np.abs(ref_rope.apply(e, x, pos) - want)) <= 2.0**-52 * scale
    assert np.max(np.abs(fast.apply(e, x, pos) - want)) <= 4 * 2.0**-52 * scale


@pytest.mark.parametrize("fields", [{"mrope_section": [1, 2, 3]}, {"mrope_section": [2, 2, 2], "mrope_interleaved": True},
                                    {"axes_dims_rope": [4, 8]}, {"axes_parity": True, "convention": "half"}])
@pytest.mark.parametrize("convention", ["half", "interleaved", "rope_interleave"])
def test_multi_axis_references_are_the_definitions(fields, convention):
    """definitions.axis_angles (pair j at p[a(j)] theta_j) with ropespec.spec.scaling's frequencies, in mpmath, is what both
    references compute at position vectors of unequal axes, and text tokens ((n,) positions) are every axis at p."""
    from ropespec.spec import definitions, tables

    e = Expect(head_dim=16, rotary_dim=12, convention=fields.get("convention", convention), max_position=1 << 20,
               **{k: v for k, v in fields.items() if k != "convention"})
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 16))
    pos = rng.integers(0, 1 << 20, (5, e.n_axes))
    with mpmath.workprec(120):
        th = tables.frequencies(e)
        want = np.array([[float(v) for v in definitions.encode(e, [mpmath.mpf(float(v)) for v in row],
                                                               definitions.axis_angles(e.pair_axes(), [int(q) for q in p], th),
                                                               mpmath.cos, mpmath.sin)]
                         for row, p in zip(x, pos)])
    scale = np.abs(x).max()
    assert np.max(np.abs(ref_rope.apply(e, x, pos) - want)) <= 2.0**-52 * scale
    assert np.max(np.abs(fast.apply(e, x, pos) - want)) <= 4 * 2.0**-52 * scale
    text = np.array([3, 70000, 5, 0, 1])
    assert np.array_equal(ref_rope.apply(e, x, text), ref_rope.apply(e, x, np.repeat(text[:, None], e.n_axes, axis=1)))
    assert np.array_equal(fast.apply(e, x, text), fast.apply(e, x, np.repeat(text[:, None], e.n_axes, axis=1)))

