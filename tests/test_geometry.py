"""The pair geometry (spec/geometry.py): one object says which dims turn together, with which axis and at which
frequency index; an expectation answers those questions by asking it, so a change to the geometry (a proof's
mutation) is seen by every expectation."""

from __future__ import annotations

import pytest

from ropespec.spec import Expect
from ropespec.spec.geometry import PairGeometry
from ropespec.spec.proofs.mutations import mutated


@pytest.mark.parametrize("fields", [
    {"head_dim": 16},
    {"head_dim": 16, "rotary_dim": 8, "convention": "interleaved"},
    {"head_dim": 16, "convention": "rope_interleave"},
    {"head_dim": 16, "mrope_section": [4, 2, 2], "mrope_interleaved": True},
    {"head_dim": 24, "axes_dims_rope": [4, 8, 12], "axes_offset": [1, 0, 0]},
    {"head_dim": 16, "axes_parity": True, "axis_names": ["h", "w"]},
])
def test_an_expectation_answers_what_its_geometry_does(fields):
    e = Expect(**fields)
    g = PairGeometry.of(e)
    assert e.geometry == g
    for name in ("pair_axes", "ladder", "pairs", "out_pairs", "output_dims", "axes_kind", "shared_ladder"):
        assert getattr(e, name)() == getattr(g, name)(), name
    assert (e.n_pairs, e.multi_axis, e.n_axes, e.axes) == (g.n_pairs, g.multi_axis, g.n_axes, g.axes)
    assert e.position_shape(3) == g.position_shape(3)


def test_the_geometry_is_read_off_the_validated_fields():
    lifted = Expect(head_dim=16, rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3]})
    assert lifted.geometry.mrope_section == (2, 3, 3) and lifted.multi_axis
    zeros = Expect(head_dim=16, mrope_section=[2, 3, 3], axes_offset=[0, 0, 0])
    assert zeros.geometry.axes_offset is None and not zeros.pair_offsets().any()


def test_a_mutation_of_the_geometry_is_seen_by_every_expectation():
    e = Expect(head_dim=8)
    assert e.pairs() == [(0, 4), (1, 5), (2, 6), (3, 7)]
    with mutated("convention: swapped"):
        assert e.pairs() == [(0, 1), (2, 3), (4, 5), (6, 7)]
        assert e.output_dims() == list(range(8))
    assert e.pairs() == [(0, 4), (1, 5), (2, 6), (3, 7)]


@pytest.mark.parametrize("convention", ["half", "interleaved", "rope_interleave"])
def test_the_reverse_direction_is_each_pair_in_the_other_order(convention):
    """Turning (b, a) by +phi turns (a, b) by -phi: the reverse direction is the geometry's pairs swapped, and the
    exact reference then turns every pair by -p theta_i (nanochat's rotate_half cat(x2, -x1))."""
    import numpy as np

    from ropespec import reference

    forward = Expect(head_dim=8, convention=convention)
    reverse = forward.replace(direction="reverse")
    assert reverse.pairs() == [(b, a) for a, b in forward.pairs()]
    assert sorted(map(sorted, reverse.out_pairs())) == sorted(map(sorted, forward.out_pairs()))
    x = np.random.default_rng(0).normal(size=(1, 8))
    th = reference.thetas(forward) * 5
    want = np.zeros(8)
    for ((a, b), (oa, ob)), t in zip(zip(forward.pairs(), forward.out_pairs()), th):
        want[oa], want[ob] = x[0, a] * np.cos(t) + x[0, b] * np.sin(t), -x[0, a] * np.sin(t) + x[0, b] * np.cos(t)
    assert np.abs(reference.apply(reverse, x, np.array([5]))[0] - want).max() < 1e-15
    assert "direction" not in forward.to_dict() and reverse.to_dict()["direction"] == "reverse"


def test_a_direction_outside_the_two_is_refused():
    from ropespec.spec.expectation import ExpectationError

    with pytest.raises(ExpectationError, match="direction: must be forward .* or reverse"):
        Expect.from_dict({"direction": "backwards"})


@pytest.mark.parametrize("target, holds", [("ropespec.implementations.numpy_rope:make", True),
                                           ("ropespec.implementations.zoo.rope.backwards:make", False)])
def test_the_reverse_direction_holds_code_that_turns_so_and_names_code_that_does_not(target, holds):
    """The shipped RoPE, asked for the reverse direction, computes it; the zoo's sign error (-p theta_i of whatever
    the expectation says) turns RoFormer's way under it, and is named direction."""
    from ropespec import check

    r = check(target, Expect(head_dim=32, direction="reverse"), profile="ci", seed=1, invariants=["rope.conformance"])
    assert r.passed == holds, r.report()
    if not holds:
        assert {x.diagnosis for x in r.results if x.status == "fail"} == {"direction"}, r.report()
