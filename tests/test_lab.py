"""The lab grader: the shipped stdlib module passes; each zoo variant's fault is named; missing
functions are reported as missing."""

import importlib
import json
from pathlib import Path

import pytest

from ropespec import lab
from ropespec.cli import main

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = sorted(p.stem for p in (ROOT / "implementations" / "zoo" / "lab").glob("*.py") if p.stem != "__init__")


def test_shipped_lab_module_passes(capsys, tmp_path):
    out = tmp_path / "lab.json"
    assert main(["check", "--module", str(ROOT / "implementations" / "stdlib_lab.py"), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["passed"] and [r["property"] for r in data["results"]] == list(lab.FUNCTIONS)
    assert "7 passed, 0 failed" in capsys.readouterr().out


def test_a_failing_lab_module_exits_1(capsys):
    assert main(["check", "--module", str(ROOT / "implementations" / "zoo" / "lab" / "backwards.py")]) == 1
    assert "fail" in capsys.readouterr().out


def test_shipped_lab_module_imports_no_numpy():
    text = (ROOT / "implementations" / "stdlib_lab.py").read_text()
    assert "numpy" not in text.replace("numpy or", "") and "import math" in text


@pytest.mark.parametrize("variant", VARIANTS)
def test_zoo_variant_faults_are_named(variant):
    fault = importlib.import_module(f"ropespec.implementations.zoo.lab.{variant}").FAULT
    results = {r.property: r for r in lab.grade(str(ROOT / "implementations" / "zoo" / "lab" / f"{variant}.py"))}
    for name, r in results.items():
        if name not in fault:
            assert r.status == "pass", (name, r.message)
        elif fault[name] is None:
            assert r.status == "fail" and r.message.startswith("missing:"), (name, r.message)
        else:
            assert r.status == "fail" and r.diagnosis == fault[name], (name, r.diagnosis, r.message)


def test_lab_usage_errors(capsys):
    assert main(["check", "--module", "no/such/lab.py"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["check", "ropespec.implementations.numpy_rope:make", "--module", str(ROOT / "implementations" / "stdlib_lab.py")]) == 2
