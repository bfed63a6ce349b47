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
