"""ropespec check's configuration matrix on one machine: --expect repeated or a glob of config.json files, --dtype and
--layout as comma-separated lists; one implementation per TARGET and combination, named by it; a combination the
TARGET declines is a skip with its reason; one summary across the matrix with each failure once and the
configurations it appears in; JSON carries each implementation's configuration; bad input is one line, exit 2,
before any check."""

import json
import shutil
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
    code = main(["check", "implementations.numpy_rope:make", "implementations.zoo.wrong_base:make",
                 "--expect", "llama3.1-8b", "--expect", "mistral-7b-v0.1", "--dtype", "float32,bfloat16",
                 "--profile", "ci", "--seed", "0", "--invariant", "rope.conformance", "--json", str(report), "-j", jobs])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    data = json.loads(report.read_text())
    names = [i["name"] for i in data["implementations"]]
    assert len(names) == 8 and "implementations.numpy_rope:make[mistral-7b-v0.1-bfloat16-nd]" in names, names
    by_name = {i["name"]: i for i in data["implementations"]}
    assert by_name["implementations.numpy_rope:make[llama3.1-8b-float32-nd]"]["configuration"] == \
        {"expect": "llama3.1-8b", "dtype": "float32", "layout": "nd"}
    declined = by_name["implementations.numpy_rope:make[llama3.1-8b-bfloat16-nd]"]
    assert not declined["checked"] and all("numpy has no bfloat16" in r["message"] for r in declined["results"]
                                           if r["invariant"] == "rope.conformance")
    text = " ".join(out.split())
    assert "implementations.numpy_rope:make: held in 2 of 2 configurations checked (2 declined" in text
    assert "[base] rope.conformance in 1 of 1: mistral-7b-v0.1-float32-nd" in text


def test_a_glob_of_config_files_is_one_configuration_each(tmp_path, capsys, monkeypatch):
    """A model directory tree: each config.json is named by its folder; the layouts multiply it."""
    for model in ("gpt-neox-20b", "deepseek-v3"):
        (tmp_path / "models" / model).mkdir(parents=True)
        shutil.copy(FIXTURES / f"{model}.json", tmp_path / "models" / model / "config.json")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "implementations.numpy_layout:bshd", "--expect", "models/**/config.json", "--layout",
                 "bshd", "--profile", "ci", "--seed", "0", "--invariant", "rope.conformance", "--json", "r.json"])
    assert code == 0, capsys.readouterr().out[-2000:]
    names = sorted(i["name"] for i in json.loads((tmp_path / "r.json").read_text())["implementations"])
    assert names == ["implementations.numpy_layout:bshd[deepseek-v3-float32-bshd]",
                     "implementations.numpy_layout:bshd[gpt-neox-20b-float32-bshd]"], names


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
    code = main(["check", "implementations.numpy_rope:make", *args, "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "r.json").exists()  # nothing ran, nothing written


def test_a_report_never_overwrites_a_config_the_glob_reads(tmp_path, capsys):
    (tmp_path / "m").mkdir()
    shutil.copy(FIXTURES / "gpt-j-6b.json", tmp_path / "m" / "config.json")
    before = (tmp_path / "m" / "config.json").read_text()
    code = main(["check", "implementations.numpy_rope:make", "--expect", str(tmp_path / "*" / "config.json"),
                 "--json", str(tmp_path / "m" / "config.json")])
    err = capsys.readouterr().err
    assert code == 2 and "is the --expect file: a report never overwrites an input" in err, err
    assert (tmp_path / "m" / "config.json").read_text() == before
