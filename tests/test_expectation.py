"""The expectation validates itself and names the offending field."""

import json
import math

import numpy as np
import pytest

from ropespec import reference
from ropespec.spec import Expect, ExpectationError


def test_defaults_and_resolved_rotary_dim():
    e = Expect()
    assert (e.head_dim, e.rope_theta, e.convention, e.rotary_dim, e.dtype, e.max_position) == (
        128, 10000.0, "half", 128, "float32", 131072)
    assert Expect(head_dim=96, partial_rotary_factor=0.25).rotary_dim == 24  # gpt-neox-20b
    assert Expect(head_dim=128, rotary_dim=32).n_pairs == 16


def test_multi_axis_fields_name_the_field_and_the_rule():
    cases = [
        (dict(mrope_section=[16, 24, 23]), "mrope_section", "(sum 63)"),
        (dict(mrope_section=[0, 32, 32]), "mrope_section", "integers >= 1"),
        (dict(mrope_section=[1, 1, 1, 1, 60]), "mrope_section", "1 to 4"),
        (dict(mrope_section=[4, 30, 30], mrope_interleaved=True), "mrope_section", "1 + 3 x 29 must be < rotary_dim/2"),
        (dict(head_dim=256, rotary_dim=64, mrope_section=[10, 12, 10], mrope_interleaved=True), "mrope_section",
         "1 + 3 x 11 must be < rotary_dim/2 = 32"),
        (dict(mrope_interleaved=True), "mrope_interleaved", "needs mrope_section"),
        (dict(axes_dims_rope=[16, 56, 55]), "axes_dims_rope", "(sum 127)"),
        (dict(axes_dims_rope=[16, 56, 56], mrope_section=[16, 24, 24]), "axes_dims_rope", "one way"),
        (dict(head_dim=10, axes_parity=True), "axes_parity", "even number of rotary pairs"),
        (dict(mrope_section=[16, 24, 24], axis_names=["t", "h"]), "axis_names", "3 distinct"),
        (dict(axis_names=["x"]), "axis_names", "needs a multi-axis"),
        (dict(mrope_section=[16, 24, 24], rope_scaling={"rope_type": "linear", "factor": 2.0}), "rope_scaling", "no length"),
    ]
    for kwargs, field, says in cases:
        with pytest.raises(ExpectationError) as info:
            Expect(head_dim=kwargs.pop("head_dim", 128), **kwargs)
        assert info.value.field == field and says in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_interleaved_sections_end_where_the_strided_slice_ends():
    """Axis a > 0 of an interleaved M-RoPE owns pairs a, a + A, ..., a + A (s_a - 1) (transformers' slice a:A s_a:A), so
    Qwen3.5's [11, 11, 10] on 32 pairs (head_dim 256, partial 0.25) is valid: h's last pair is 31, w's 29."""
    e = Expect(head_dim=256, partial_rotary_factor=0.25, mrope_section=[11, 11, 10], mrope_interleaved=True)
    axes = e.pair_axes()
    assert [axes.count(a) for a in range(3)] == [11, 11, 10] and axes[31] == 1 and axes[29] == 2


def test_mrope_in_rope_scaling_is_lifted_to_the_fields():
    """Qwen2-VL's {"type": "mrope", "mrope_section": [...]} and Qwen3-VL's default dict with mrope_interleaved are the
    expectation's own fields; the JSON of a 1-D expectation has no multi-axis key."""
    e = Expect.from_json('{"head_dim": 128, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}')
    assert e.rope_scaling is None and e.mrope_section == (16, 24, 24) and e.axes_kind() == "chunked"
    e = Expect(rope_scaling={"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True})
    assert e.axes_kind() == "interleaved" and e.pair_axes()[:4] == (0, 1, 2, 0)
    assert Expect.from_json(e.to_json()) == e
    assert "mrope_section" not in Expect().to_json() and Expect(rope_scaling={"rope_type": "default"}).rope_scaling


def test_pair_axes_and_ladders_of_each_kind():
    chunked = Expect(head_dim=16, mrope_section=[2, 3, 3])
    assert chunked.pair_axes() == (0, 0, 1, 1, 1, 2, 2, 2) and chunked.ladder() == tuple((j, 16) for j in range(8))
    assert Expect(head_dim=16, mrope_section=[4, 2, 2], mrope_interleaved=True).pair_axes() == (0, 1, 2, 0, 1, 2, 0, 0)
    per_axis = Expect(head_dim=12, axes_dims_rope=[4, 8])
    assert per_axis.pair_axes() == (0, 0, 1, 1, 1, 1) and per_axis.ladder() == ((0, 4), (1, 4), (0, 8), (1, 8), (2, 8), (3, 8))
    parity = Expect(head_dim=8, axes_parity=True)
    assert parity.pair_axes() == (0, 0, 1, 1) and parity.ladder() == ((0, 8), (2, 8), (1, 8), (3, 8))
    assert chunked.rows_at([0, 1, 9]).tolist() == [[0, 1, 9], [1, 9, 0], [9, 0, 1]]


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"head_dim": 127}, "head_dim"),
        ({"head_dim": 0}, "head_dim"),
        ({"rope_theta": 1.0}, "rope_theta"),
        ({"rope_theta": float("nan")}, "rope_theta"),
        ({"rotary_dim": 256}, "rotary_dim"),
        ({"rotary_dim": 33}, "rotary_dim"),
        ({"convention": "neox"}, "convention"),
        ({"dtype": "int8"}, "dtype"),
        ({"angle_dtype": "float8"}, "angle_dtype"),
        ({"max_position": 0}, "max_position"),
        ({"partial_rotary_factor": 1.5}, "partial_rotary_factor"),
        ({"rotary_dim": 64, "partial_rotary_factor": 0.25}, "rotary_dim"),
        ({"rope_scaling": {"rope_type": "yarm", "factor": 4.0}}, "rope_scaling.rope_type"),
        ({"rope_scaling": {"factor": 4.0}}, "rope_scaling.rope_type"),
        ({"rope_scaling": {"rope_type": "linear"}}, "rope_scaling.factor"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 0.5}}, "rope_scaling.factor"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 2.0, "beta_fast": 32}}, "rope_scaling.beta_fast"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
                           "original_max_position_embeddings": 8192}}, "rope_scaling.high_freq_factor"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}},
         "rope_scaling.original_max_position_embeddings"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "truncate": "no"}}, "rope_scaling.truncate"),
        ({"head_dim": 8, "rope_scaling": {"rope_type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1, 1, 1]}},
         "rope_scaling.short_factor"),
    ],
)
def test_bad_expectations_name_the_field(kwargs, field):
    with pytest.raises(ExpectationError) as info:
        Expect(**kwargs)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert "\n" not in str(info.value)


def test_unknown_key_and_bad_json():
    with pytest.raises(ExpectationError, match="^head_dimm: unknown field; did you mean head_dim\\?$"):
        Expect.from_dict({"head_dimm": 64})
    with pytest.raises(ExpectationError, match="^expect: not valid JSON"):
        Expect.from_json("{head_dim: 64")
    with pytest.raises(ExpectationError, match="^expect: must be a JSON object"):
        Expect.from_json("[64]")


@pytest.mark.parametrize("d, said", [
    ({"hed_dim": 128}, "hed_dim: unknown field; did you mean head_dim?"),
    ({"rope_thetta": 1e4}, "rope_thetta: unknown field; did you mean rope_theta?"),
    ({"head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factr": 4}},
     "rope_scaling.factr: unknown key for rope_type 'yarn'; did you mean factor?"),
    ({"head_dim": 64, "rope_scaling": {"rope_type": "yarnn", "factor": 4}},
     "rope_scaling.rope_type: unknown 'yarnn'; did you mean yarn?"),
])
def test_a_mistyped_name_gets_the_name_it_means_not_the_list(d, said):
    """A typo needs the one name it misses, as a mistyped preset gets it: the list of every field is for a name like
    none of them."""
    with pytest.raises(ExpectationError) as info:
        Expect.from_dict(d)
    assert str(info.value) == said
    with pytest.raises(ExpectationError, match=r"^zzz: unknown field \(known: .*head_dim.*\)$"):
        Expect.from_dict({"zzz": 1})


def test_json_round_trip_and_hash():
    e = Expect(head_dim=64, rope_theta=5e5, convention="interleaved", partial_rotary_factor=0.5,
               rope_scaling={"type": "linear", "factor": 4.0})
    assert e.rope_scaling["rope_type"] == "linear"  # legacy "type" is normalised
    back = Expect.from_json(e.to_json())
    assert back == e and hash(back) == hash(e)
    assert json.loads(e.to_json())["rotary_dim"] == 32
    with pytest.raises(TypeError):
        e.rope_scaling["factor"] = 2.0  # frozen all the way down


def test_pairs_of_both_conventions():
    assert Expect(head_dim=8, convention="interleaved").pairs() == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert Expect(head_dim=8, convention="half").pairs() == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert Expect(head_dim=8, rotary_dim=4).pairs() == [(0, 2), (1, 3)]


def test_rope_interleave_reads_interleaved_pairs_and_writes_the_half_layout():
    e = Expect(head_dim=10, rotary_dim=8, convention="rope_interleave")
    assert e.pairs() == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert e.out_pairs() == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert e.output_dims() == [0, 4, 1, 5, 2, 6, 3, 7, 8, 9]  # pass-through dims stay
    for c in ("half", "interleaved"):
        ec = Expect(head_dim=8, convention=c)
        assert ec.out_pairs() == ec.pairs() and ec.output_dims() == list(range(8))


def test_replace_rederives_rotary_dim():
    assert Expect(head_dim=64).replace(head_dim=8).rotary_dim == 8
    assert Expect(head_dim=64, rotary_dim=16).replace(head_dim=32).rotary_dim == 16


def test_longrope_factor_comes_from_the_configuration_not_from_how_far_to_test():
    from ropespec import reference

    phi3 = Expect(head_dim=96, max_position=131072, rope_scaling={
        "rope_type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48,
        "original_max_position_embeddings": 4096})
    assert phi3.rope_scaling["factor"] == 32.0  # max_position_embeddings / original, as transformers derives it
    further = phi3.replace(max_position=2**20)  # --max-position: test further, expect the same
    assert further.rope_scaling["factor"] == 32.0
    assert reference.attention_factor(further) == reference.attention_factor(phi3)


def test_real_coordinates_turn_each_axis_by_position_plus_offset_times_scale():
    """DINOv3 turns a patch by its centre in [-1, 1] times 2 pi: with axes_offset 0.5 - H/2 and axes_scale 4 pi/H, the
    coordinate (i + 0.5 - H/2) 4 pi/H is 2 pi ((i + 0.5)/H 2 - 1); the positions handed over stay the grid's own, and
    the exact reference turns by the coordinate unrounded (the float64 oracle agrees with it to its 2 ulp)."""
    H = 14
    e = Expect.from_dict({"head_dim": 8, "axes_dims_rope": [4, 4], "axes_offset": [0.5 - H / 2] * 2,
                          "axes_scale": [4 * math.pi / H] * 2, "max_position": H})
    got = e.pair_positions(np.array([[0, 13]]))[0]
    want = [2 * math.pi * ((i + 0.5) / H * 2 - 1) for i in (0, 0, 13, 13)]
    assert np.allclose(got, want, rtol=1e-15), (got, want)
    assert "offset [-6.5, -6.5] scale [0.897598, 0.897598]" in e.describe() and Expect.from_json(e.to_json()) == e
    assert Expect(head_dim=8, axes_dims_rope=[4, 4], axes_scale=[1, 1]).axes_scale is None  # no scale at all
    assert e.coordinates and not e.integer_offsets
    x = np.random.default_rng(0).standard_normal((3, 8))
    pos = np.array([[0, 13], [6, 7], [13, 0]])
    exact, fast = reference.apply(e, x, pos), reference.fast.apply(e, x, pos)
    assert np.all(np.abs(exact - fast) <= 4 * 2.0**-52 * np.abs(x).max())
    # the reference at a position vector is the rotation by (p + o) s theta, o and s read exactly
    # half pairs (j, j + 4); pairs 0 and 1 turn with h (at 0), 2 and 3 with w (at 13)
    c = np.array([(0 + 0.5 - H / 2) * 4 * math.pi / H] * 2 + [(13 + 0.5 - H / 2) * 4 * math.pi / H] * 2)
    c = c * reference.thetas(e)
    a, b = x[0, :4], x[0, 4:]
    assert np.allclose(exact[0], np.concatenate([a * np.cos(c) - b * np.sin(c), a * np.sin(c) + b * np.cos(c)]),
                       atol=1e-14)


def test_axes_offset_turns_each_axis_by_its_position_plus_the_offset():
    """Llama 4 vision counts patches from 1: axes_offset [1, 1] turns a patch at (x, y) by (x + 1, y + 1), while the
    positions handed over stay the grid's own, 0 to max_position - 1."""
    e = Expect(head_dim=8, convention="interleaved", axes_dims_rope=[4, 4], axes_offset=[1, 1], max_position=24)
    assert e.pair_positions(np.array([[0, 5]])).tolist() == [[1.0, 1.0, 6.0, 6.0]]
    assert "offset [1, 1]" in e.describe() and Expect.from_json(e.to_json()) == e
    assert Expect(head_dim=8, axes_dims_rope=[4, 4], axes_offset=[0, 0]).axes_offset is None  # no offset at all
    for kwargs, says in [(dict(axes_offset=[1]), "2 finite numbers"), (dict(axes_offset=[1, float("nan")]), "2 finite"),
                         (dict(axes_offset=[1, 99], max_position=24), "below max_position 24")]:
        with pytest.raises(ExpectationError) as info:
            Expect(head_dim=8, axes_dims_rope=[4, 4], **kwargs)
        assert info.value.field == "axes_offset" and says in str(info.value), str(info.value)
    for bad in ([1], [1, 0], [1, -2], [1, float("inf")], "2"):
        with pytest.raises(ExpectationError) as info:
            Expect(head_dim=8, axes_dims_rope=[4, 4], axes_scale=bad)
        assert info.value.field == "axes_scale" and "finite numbers > 0" in str(info.value), str(info.value)
    with pytest.raises(ExpectationError) as info:
        Expect(head_dim=8, axes_offset=[1])
    assert info.value.field == "axes_offset" and "needs a multi-axis" in str(info.value)
