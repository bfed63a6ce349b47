"""One structured failure: what failed is a record (ropespec.implementations.contract.Failure) that the assertion helpers
build, the diagnosis names and every report renders with one function (ropespec.implementations.contract.render): the text
report, JSON, JUnit and pytest say the same line, and the JSON carries the record's fields, so that nothing reads a
word or its evidence back out of the text."""

from __future__ import annotations

import ast
import json
import pickle
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from ropespec.implementations.contract import FAILURE_FIELDS, Failure, Fault, render
from ropespec.properties.assertions import assert_close, assert_equal
from ropespec.properties.results import Result
from ropespec.api import check
from ropespec.formats import json_text, junit_text

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wrong_base():
    """A RoPE that ignores the configured base: rope.conformance fails and the diagnosis names the base."""
    return check("ropespec.implementations.zoo.rope.wrong_base:make", {"head_dim": 16, "rope_theta": 10000.0}, seed=0,
                 invariants=["rope.conformance:conformance"])


def test_a_failure_is_a_record_of_its_fields():
    """assert_close fills what, got, expected, detail and call; the message is their one-line rendering."""
    with pytest.raises(Failure) as info:
        assert_close("f(x, p)", np.array([[1.0, 2.0]]), np.array([[1.0, 2.5]]), 1e-6, call="positions [3]")
    f = info.value
    assert (f.what, f.got, f.expected, f.call) == ("f(x, p)[row 0, dim 1]", "2.0", "2.5", "positions [3]")
    assert f.detail.startswith("|error| 0.5 > bound 1e-06") and f.evidence is None and not f.also
    assert f.message == render(f) == str(f) == f"f(x, p)[row 0, dim 1]=2.0, but should be 2.5: {f.detail} [positions [3]]"


def test_naming_a_failure_keeps_its_observation():
    """named() sets the word and its evidence, and leaves the observation, its values and its ratio alone."""
    with pytest.raises(Failure) as info:
        assert_equal("cached key", np.array([[1.0]]), np.array([[2.0]]), call="step 1")
    f = info.value
    g = f.named("base", "the ladder of base 5e5", also=("scaling",))
    assert (g.what, g.got, g.expected, g.detail, g.call, g.ratio) == (f.what, f.got, f.expected, f.detail, f.call, f.ratio)
    assert (g.diagnosis, g.evidence, g.also) == ("base", "the ladder of base 5e5", ("scaling",))
    assert g.message == f"{f.message} -- base: the ladder of base 5e5"
    assert g.named("convention", "pairs (2i, 2i + 1)", follows=True).message.endswith(
        " -- follows from convention: pairs (2i, 2i + 1)")


@pytest.mark.parametrize("kind", [Failure, Fault])
def test_a_failure_crosses_processes_and_files_whole(kind):
    f = kind("f(x, p)[row 1, dim 0]", "scaling", 12.5, None, got="0.25", expected="0.5", detail="|error| 0.25",
             call="positions [0, 7]", evidence="theta' is theta / 8", follows=True, also=("base",))
    for back in (pickle.loads(pickle.dumps(f)), kind.from_dict(json.loads(json.dumps(f.to_dict())))):
        assert type(back) is kind and back.to_dict() == f.to_dict() and back.message == f.message
    assert set(f.to_dict()) == set(FAILURE_FIELDS)


def test_every_report_renders_the_same_record(wrong_base, tmp_path):
    """The JSON's record, rendered, is its message, the text report's and JUnit's; the word and its evidence are
    fields, not text to parse."""
    [r] = [r for r in wrong_base.results if r.status == "fail"]
    assert r.diagnosis == "base" and r.failure.diagnosis == "base" and "base" in r.failure.evidence
    [entry] = json.loads(json_text(wrong_base))["implementations"][0]["results"]
    record = entry["failure"]
    assert record["diagnosis"] == entry["diagnosis"] == "base" and record["evidence"] == r.failure.evidence
    assert record["what"] and record["got"] and record["expected"] and record["call"]
    assert render(Failure.from_dict(record)) == entry["message"] == r.message
    assert f"\n  {r.message}\n" in wrong_base.report()
    [case] = ET.fromstring(junit_text(wrong_base)).iter("failure")
    assert r.message in case.text and case.get("type") == "base"
    back = Result.from_json(entry, implementation=r.implementation, seed=0, profile=None)
    assert back.failure.to_dict() == r.failure.to_dict() and back.message == r.message


def test_a_declared_failure_keeps_its_record():
    """An expected failure says why before the record, and the record stays whole."""
    r = Result("impl", "p", "rope.conformance", "xfail", note="expected failure (documented)",
               failure=Failure("f(x, p)", got="1", expected="2"))
    assert r.message == "expected failure (documented): f(x, p)=1, but should be 2"
    r.message = "ropespec error"  # said in other words: no record left to contradict it
    assert r.failure is None and r.message == "ropespec error"


def _string_constants(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node


def test_no_message_is_glued_or_parsed_back():
    """" -- word: evidence" is written by render() alone: no other string of the suite holds " -- ", and no test
    splits a message there to read the word or its evidence back."""
    glued = [f"{p.relative_to(ROOT)}:{n.lineno}" for d in ("spec", "reference", "implementations", "properties",
                                                           "ropespec")
             for p in sorted((ROOT / d).rglob("*.py")) for n in _string_constants(p)
             if " -- " in n.value and not (p.name == "contract.py" and n.value in (" -- ",) or n.value.startswith(
                 "A failure as one line"))]
    assert glued == [], glued
    parsed = [f"{p.name}:{i}" for p in sorted((ROOT / "tests").glob("*.py")) if p.name != Path(__file__).name
              for i, line in enumerate(p.read_text().splitlines(), 1) if "split(' -- ')" in line or 'split(" -- ")' in line]
    assert parsed == [], parsed


def test_the_measured_model_is_computed_once_per_implementation(monkeypatch):
    """Every failure of one implementation under one expectation reads one measured model: the probes that name
    the fault run once, however many properties fail."""
    from ropespec.properties import naming

    runs = []
    real = naming.run_diagnosis
    monkeypatch.setattr(naming, "run_diagnosis", lambda f, e: runs.append(e) or real(f, e))
    result = check("ropespec.implementations.zoo.rope.wrong_base:make", {"head_dim": 16, "rope_theta": 10000.0}, seed=0,
                   invariants=["rope.conformance", "rope.composition", "rope.relative-position"])
    failed = [r for r in result.results if r.status == "fail"]
    assert len(failed) >= 3 and {r.diagnosis for r in failed} == {"base"}, [(r.invariant, r.diagnosis) for r in failed]
    assert len(runs) == 1, len(runs)


ODD_PAIR = '''
import numpy as np

def apply(x, positions):
    d = x.shape[-1]
    inv = 10000.0 ** (-np.arange(0, d, 2) / d)
    inv[3] = 0.0123  # one pair turns at a frequency of no ladder and no scaling method
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv[None]
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).astype(x.dtype)
'''


def test_unknown_says_what_was_measured(tmp_path):
    """Where no model of a fault fits, the word is unknown and its evidence is the measurement: the pairs that turn
    at another frequency, and the fingerprint (convention, direction, offset, factor, base, curve)."""
    (tmp_path / "odd_pair.py").write_text(ODD_PAIR)
    result = check(f"{tmp_path / 'odd_pair.py'}:apply", {"head_dim": 16}, seed=0,
                   invariants=["rope.conformance:conformance"])
    [r] = result.results
    assert r.status == "fail" and r.diagnosis == "unknown", r.message
    evidence = r.failure.evidence
    assert evidence.startswith("no model of a fault fits what was measured: 1 of 8 pairs turn at another frequency "
                               "than expected (pair 3 at 0.0123 for 0.0316228)"), evidence
    assert "convention: half; rotary dim 16 of 16" in evidence and "direction: forward" in evidence, evidence
