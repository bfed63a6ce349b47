"""ropespec check's configuration matrix on one machine: --expect repeated or a glob of config.json files, --dtype and
--layout as comma-separated lists; one implementation per TARGET and combination, named by it; a combination the
TARGET declines is a skip with its reason; one summary across the matrix with each failure once and the
configurations it appears in; JSON carries each implementation's configuration; bad input is one line, exit 2,
before any check."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ropespec.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "configs"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_matrix_of_targets_expectations_and_dtypes(jobs, tmp_path, capsys):
    """Two TARGETs x two expectations x two dtypes, in one process and on the -j runners: numpy has no bfloat16
    (declined: skipped, not exit 2), the correct factory holds in every checked configuration, the zoo's wrong base
    fails [base] in the one it computes (it declines llama3 scaling)."""
    report = tmp_path / "r.json"
    code = main(["check", "ropespec.implementations.numpy_rope:make", "ropespec.implementations.zoo.rope.wrong_base:make",
                 "--expect", "llama3.1-8b", "--expect", "mistral-7b-v0.1", "--dtype", "float32,bfloat16",
                 "--profile", "ci", "--seed", "0", "--invariant", "rope.conformance", "--json", str(report), "-j", jobs,
                 "--junit", str(tmp_path / "r.xml")])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    data = json.loads(report.read_text())
    names = [i["name"] for i in data["implementations"]]
    assert len(names) == 8 and "ropespec.implementations.numpy_rope:make[mistral-7b-v0.1-bfloat16-nd]" in names, names
    by_name = {i["name"]: i for i in data["implementations"]}
    assert by_name["ropespec.implementations.numpy_rope:make[llama3.1-8b-float32-nd]"]["configuration"] == \
        {"expect": "llama3.1-8b", "dtype": "float32", "layout": "nd"}
    declined = by_name["ropespec.implementations.numpy_rope:make[llama3.1-8b-bfloat16-nd]"]
    assert not declined["checked"] and all("numpy has no bfloat16" in r["message"] for r in declined["results"]
                                           if r["invariant"] == "rope.conformance")
    suites = ET.parse(tmp_path / "r.xml").getroot().findall("testsuite")  # JUnit: one suite per check, configured
    assert [s.get("name") for s in suites] == names
    assert {p.get("name"): p.get("value") for p in suites[0].find("properties")} == data["implementations"][0][
        "configuration"]
    text = " ".join(out.split())
    assert "ropespec.implementations.numpy_rope:make: held in 2 of 2 configurations checked (2 declined" in text
    assert "[base] rope.conformance in 1 of 1: mistral-7b-v0.1-float32-nd" in text


def test_a_glob_of_config_files_is_one_configuration_each(tmp_path, capsys, monkeypatch):
    """A model directory tree: each config.json is named by its folder; the layouts multiply it."""
    for model in ("gpt-neox-20b", "deepseek-v3"):
        (tmp_path / "models" / model).mkdir(parents=True)
        shutil.copy(FIXTURES / f"{model}.json", tmp_path / "models" / model / "config.json")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "ropespec.implementations.numpy_layout:bshd", "--expect", "models/**/config.json", "--layout",
                 "bshd", "--profile", "ci", "--seed", "0", "--invariant", "rope.conformance", "--json", "r.json"])
    assert code == 0, capsys.readouterr().out[-2000:]
    names = sorted(i["name"] for i in json.loads((tmp_path / "r.json").read_text())["implementations"])
    assert names == ["ropespec.implementations.numpy_layout:bshd[deepseek-v3-float32-bshd]",
                     "ropespec.implementations.numpy_layout:bshd[gpt-neox-20b-float32-bshd]"], names


@pytest.mark.parametrize("args, says", [
    (["--expect", "no/such/*.json"], "--expect: 'no/such/*.json' matches no file"),
    (["--dtype", "float32,float8"], "--dtype: unknown 'float8'"),
    (["--layout", "bshd,xyz"], "--layout: unknown 'xyz'"),
    (["--expect", "{GLOB}"], "bad.json: config.json: hidden_size: must be a positive integer"),
])
def test_bad_matrix_input_is_one_line_before_any_check(args, says, tmp_path, capsys):
    (tmp_path / "good").mkdir()
    shutil.copy(FIXTURES / "gpt-j-6b.json", tmp_path / "good" / "config.json")
    (tmp_path / "bad.json").write_text('{"model_type": "llama", "hidden_size": "x", "num_attention_heads": 8}')
    args = [a.replace("{GLOB}", str(tmp_path / "**" / "*.json")) for a in args]
    code = main(["check", "ropespec.implementations.numpy_rope:make", *args, "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "r.json").exists()  # nothing ran, nothing written


def test_a_report_never_overwrites_a_config_the_glob_reads(tmp_path, capsys):
    (tmp_path / "m").mkdir()
    shutil.copy(FIXTURES / "gpt-j-6b.json", tmp_path / "m" / "config.json")
    before = (tmp_path / "m" / "config.json").read_text()
    code = main(["check", "ropespec.implementations.numpy_rope:make", "--expect", str(tmp_path / "*" / "config.json"),
                 "--json", str(tmp_path / "m" / "config.json")])
    err = capsys.readouterr().err
    assert code == 2 and "is the --expect file: a report never overwrites an input" in err, err
    assert (tmp_path / "m" / "config.json").read_text() == before


RESUMED = ["check", "ropespec.implementations.numpy_rope:make", "ropespec.implementations.zoo.rope.wrong_base:make", "--expect", "llama3.1-8b",
           "--expect", "mistral-7b-v0.1", "--profile", "ci", "--invariant", "rope.conformance"]


def test_resume_runs_only_what_the_report_does_not_hold_and_reports_it_all(tmp_path, capsys):
    """An interrupted matrix (two implementations whole, the third cut short, the fourth not begun), resumed: the
    two held ones are kept as written, the other two run whole with the report's seed, and the merged report is the
    uninterrupted run's, check for check."""
    full = tmp_path / "full.json"
    assert main([*RESUMED, "--seed", "4", "--json", str(full)]) == 1
    capsys.readouterr()
    data = json.loads(full.read_text())
    cut = dict(data, interrupted="interrupted", passed=False)
    cut["implementations"] = [*data["implementations"][:2],
                              dict(data["implementations"][2], results=data["implementations"][2]["results"][:1])]
    (tmp_path / "cut.json").write_text(json.dumps(cut))
    code = main([*RESUMED, "--resume", str(tmp_path / "cut.json"), "--json", str(tmp_path / "resumed.json")])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    assert f"resumed from {tmp_path / 'cut.json'}: 2 of 4 implementations held there, 2 checked now (seed 4)" in \
        " ".join(out.split())
    resumed = json.loads((tmp_path / "resumed.json").read_text())
    assert resumed["implementations"][:2] == data["implementations"][:2]  # held: as written
    verdicts = lambda d: [(i["name"], [(r["invariant"], r["property"], r["status"], r["diagnosis"], r["worst"])  # noqa: E731
                                       for r in i["results"]]) for i in d["implementations"]]
    assert verdicts(resumed) == verdicts(data)
    assert (resumed["seed"], resumed["checks_finished"], resumed["passed"], resumed["resumed_from"]) == \
        (4, data["checks_finished"], False, str(tmp_path / "cut.json"))
    assert "[base] rope.conformance" in out  # the text report holds the held failures too


@pytest.mark.parametrize("args, says", [
    (["--profile", "ci", "--seed", "5"], "was run with --seed 4, which a resumed run keeps (drop --seed 5)"),
    (["--profile", "dev"], "was run with --profile ci; resume with the same profile (this command: --profile dev)"),
    (["--profile", "ci", "--json", "{REPORT}"], "is the --resume report: a report never overwrites an input"),
    (["--profile", "ci", "--expect", "llama2-7b"], "holds 'ropespec.implementations.numpy_rope:make[mistral-7b-v0.1-float32-nd]', "
                                                   "which this command does not check: resume with the command"),
    (["--profile", "ci", "--resume", "{NOT_JSON}"], "is not JSON"),
])
def test_a_report_that_cannot_be_resumed_is_one_line(args, says, tmp_path, capsys):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"seed": 4, "profile": "ci", "implementations": [
        {"name": "ropespec.implementations.numpy_rope:make[mistral-7b-v0.1-float32-nd]", "results": []}]}))
    (tmp_path / "bad.json").write_text("{")
    args = [a.replace("{REPORT}", str(report)).replace("{NOT_JSON}", str(tmp_path / "bad.json")) for a in args]
    expects = [] if "--expect" in args else ["--expect", "mistral-7b-v0.1", "--expect", "llama3.1-8b"]
    before = report.read_text()
    code = main(["check", "ropespec.implementations.numpy_rope:make", *expects, "--resume", str(report), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert report.read_text() == before
