"""Every zoo member fails each invariant it targets; every invariant is failed by some member."""

import pytest

from implementations.zoo import members
from properties.framework import all_properties, run_property
from spec.invariants import REGISTRY

MEMBERS = members()
ALL = all_properties()
PROPS = {p.invariant: p for p in ALL}
CASES = [(m, inv) for m in MEMBERS for inv in m.targets]


@pytest.mark.parametrize("member, invariant", CASES, ids=[f"{m.name}-{inv}" for m, inv in CASES])
def test_zoo_member_fails_its_target(member, invariant):
    """At least one property of the invariant catches the member."""
    if member.array == "torch":
        pytest.importorskip("torch")
    subject = member.subject()
    results = [run_property(p, subject, profile="ci", seed_value=0) for p in ALL if p.invariant == invariant]
    failed = [r for r in results if r.status == "fail"]
    assert failed, f"{member.name} was not caught by {invariant}: {[(r.status, r.message) for r in results]}"
    assert failed[0].counterexample, "a failure must come with its counterexample"
    # and it is named: its own diagnosis, with the evidence in the message
    assert any(r.diagnosis == member.diagnosis for r in failed), [(r.diagnosis, r.message[-200:]) for r in failed]


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
