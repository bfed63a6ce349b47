"""Every zoo member fails each invariant it targets; every invariant is failed by some member."""

import pytest

from implementations.zoo import members
from properties.framework import all_properties, run_property
from spec.invariants import REGISTRY

MEMBERS = members()
PROPS = {p.invariant: p for p in all_properties()}
CASES = [(m, inv) for m in MEMBERS for inv in m.targets]


@pytest.mark.parametrize("member, invariant", CASES, ids=[f"{m.name}-{inv}" for m, inv in CASES])
def test_zoo_member_fails_its_target(member, invariant):
    subject = member.subject()
    result = run_property(PROPS[invariant], subject, profile="ci", seed_value=0)
    assert result.status == "fail", f"{member.name} was not caught by {invariant}: {result.status} {result.message}"
    assert result.counterexample, "a failure must come with its counterexample"


def test_every_invariant_has_a_zoo_member_that_fails_it():
    targeted = {inv for m in MEMBERS for inv in m.targets}
    missing = sorted(set(REGISTRY) - targeted)
    assert not missing, f"invariants no zoo member is declared to fail: {missing}"


def test_every_property_names_a_registered_invariant():
    assert set(PROPS) <= set(REGISTRY)
    assert set(REGISTRY) <= set(PROPS), "an invariant without a property"


def test_zoo_metadata():
    for m in MEMBERS:
        assert m.description and m.source and m.diagnosis
        assert set(m.targets) <= set(REGISTRY), m.name
