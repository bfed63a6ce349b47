"""Every invariant's facts, each declared once by its owner, are all there: a proof entry, a property that checks it,
the tolerance rule it applies (said by exactly one of its properties), a form that answers it, and a zoo member that
fails it."""

from __future__ import annotations

import pytest

from ropespec.properties.facts import gather
from ropespec.spec import proofs
from ropespec.spec.invariants import REGISTRY

FACTS = gather()


@pytest.mark.parametrize("invariant", list(REGISTRY))
def test_each_invariant_has_all_its_facts(invariant):
    fa = FACTS[invariant]
    assert invariant in proofs.PROOFS, "no proof entry (a proof, a definition or tested only)"
    assert fa.properties, "no property checks it"
    assert sum(bool(p.rule) for p in fa.properties) == 1, [p.name for p in fa.properties if p.rule]
    assert fa.forms, "no form answers it: no implementation would ever be checked against it"
    assert fa.zoo, "no zoo member fails it"
    assert fa.invariant.source, "where it comes from"


def test_the_forms_answer_only_invariants_of_the_registry():
    from ropespec.implementations.families import REGISTRY as FORMS

    answered = {inv for inv in REGISTRY if any(f.answers(inv, m) for f in FORMS.values() for m in ("factory", "decoder"))}
    assert answered == set(REGISTRY)
