"""The executable spec: every invariant proven, checked and failed; facts hold; docs/SPEC.md is current."""

import re
from pathlib import Path

import pytest

from implementations.zoo import members
from properties.framework import all_properties
from reference.facts import FACTS
from ropespec import specdoc
from ropespec.cli import main
from spec import formulas, proofs
from spec.invariants import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def test_every_invariant_has_a_proof_a_property_and_a_zoo_member():
    checked = {p.invariant for p in all_properties()}
    failed = {t.partition(":")[0] for m in members() for t in m.targets}
    missing = []
    for inv in REGISTRY:
        if inv not in proofs.PROOFS or not proofs.verify(inv)[0]:
            missing.append(f"{inv}: no verified proof")
        if inv not in checked:
            missing.append(f"{inv}: no property")
        if inv not in failed:
            missing.append(f"{inv}: no zoo member")
        if inv not in formulas.FORMULAS:
            missing.append(f"{inv}: no formula")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("proof_id", sorted(proofs.PROOFS))
def test_proof_verifies(proof_id):
    ok, account = proofs.verify(proof_id)
    assert ok, account


def test_a_false_statement_is_not_proven():
    """The proof machinery can fail: R(a) R(b) = R(a - b) is rejected."""
    with pytest.raises(proofs.ProofError):
        proofs._zero(proofs.R(proofs.a) * proofs.R(proofs.b) - proofs.R(proofs.a - proofs.b), "false")


@pytest.mark.parametrize("fact", FACTS, ids=[f.id for f in FACTS])
def test_tutorial_fact(fact):
    assert fact.holds(), f"{fact.claim}: stated {fact.stated}, computed {fact.computed()}"


def test_docs_spec_md_is_current():
    on_disk = (ROOT / "docs" / "SPEC.md").read_text()
    assert on_disk == specdoc.markdown(), "docs/SPEC.md is stale: run  ropespec spec --out docs/SPEC.md"


def test_html_is_self_contained(tmp_path):
    out = tmp_path / "spec.html"
    assert main(["spec", "--format", "html", "--out", str(out)]) == 0
    text = out.read_text()
    assert "<math" in text and "<mfrac>" in text
    assert "<script" not in text and "<link" not in text
    urls = set(re.findall(r"https?://[^\s'\"<>]+", text))
    assert urls <= {"http://www.w3.org/1998/Math/MathML"}, urls


def test_spec_with_an_implementation_shows_verdicts(tmp_path):
    out = tmp_path / "spec.md"
    assert main(["spec", "--impl", "implementations.zoo.backwards:make", "--expect", "llama2-7b", "--out", str(out)]) == 0
    text = out.read_text()
    assert "verdict: **fail (direction)**" in text
    assert "verdict: **pass**" in text
