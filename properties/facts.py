"""An invariant's facts in one record, gathered from where each is declared: the statement and sources
(``ropespec.spec.invariants``), the properties that check it and the
tolerance rule they apply (``properties``, declared on the property), the forms that answer it
(``ropespec.implementations.families``) and the zoo members that fail it (``ropespec.implementations.zoo``). Nothing here restates
an invariant: a fact missing at its owner is missing here (``tests/test_invariant_facts.py``). Its proof is the proofs'
record's (``ropespec.specdoc``), which imports no sympy."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.implementations.families import forms_answering
from ropespec.implementations.zoo import members
from ropespec.properties.framework import Property, all_properties
from ropespec.spec.invariants import REGISTRY, Invariant


@dataclass(frozen=True)
class Facts:
    invariant: Invariant
    properties: tuple[Property, ...]
    rule: str
    forms: tuple[str, ...]  # the forms (and decoders) that answer it
    zoo: tuple[str, ...]  # the zoo members that fail it

    @property
    def id(self) -> str:
        return self.invariant.id


def gather() -> dict[str, Facts]:
    """Every invariant's facts, in the registry's order."""
    props: dict[str, list[Property]] = {}
    for p in all_properties():
        props.setdefault(p.invariant, []).append(p)
    zoo: dict[str, list[str]] = {}
    for m in members():
        for target in m.targets:
            names = zoo.setdefault(target.partition(":")[0], [])  # a member may target several of its properties
            if m.name not in names:
                names.append(m.name)
    out = {}
    for inv in REGISTRY.values():
        mine = tuple(props.get(inv.id, ()))
        forms = []
        for f in forms_answering(inv.id):
            label = f.label if f.answers(inv.id, "factory") else f"{f.label} decoders"
            forms.append(label)
        out[inv.id] = Facts(inv, mine, next((p.rule for p in mine if p.rule), ""),
                            tuple(dict.fromkeys(forms)), tuple(zoo.get(inv.id, ())))
    return out
