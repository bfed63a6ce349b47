"""The position-ids family: the rule of spec.positions on worked examples, examples/position_ids.py's plain builders
(written as a user writes them from each model's get_rope_index) passing from a scratch folder while each buggy twin
fails with the word its docstring names and no other, transformers' own builders with the flaw ropespec found in
them, and bad input answered in one line."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ropespec.cli import main
from spec import positions as rule
from spec.expectation import Expect, ExpectationError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import position_ids_bugs  # noqa: E402


def test_the_rule_on_worked_examples():
    """get_rope_index's docstring example (3 temporal patches, 2 x 2, an interval of 50 at 25 tokens per second and
    2 s per step) and a text run resuming past a video's last frame."""
    got = rule.position_ids([("video", (3, 2, 2), 2.0)], "seconds", 25)
    assert got[:, 0].tolist() == [0] * 4 + [50] * 4 + [100] * 4
    assert got[:, 1].tolist() == [0, 0, 1, 1] * 3 and got[:, 2].tolist() == [0, 1, 0, 1] * 3
    seq = rule.position_ids([("text", 2), ("video", (4, 2, 2), 1.0), ("text", 3)], "seconds", 2)
    assert seq[2:18, 0].max() == 2 + 6 and seq[18:].tolist() == [[9] * 3, [10] * 3, [11] * 3]
    frames = rule.position_ids([("text", 1), ("video", (2, 1, 2), 0.5)], "frames")
    assert frames.tolist() == [[0, 0, 0], [1, 1, 1], [1, 1, 2], [3, 3, 3], [3, 3, 4]]
    # float32's clock may land just under a whole number of positions: the integer below is allowed there only
    assert rule.time_options(3, 2 / 3, "seconds", 2) == {3, 4}
    assert rule.time_options(3, 0.75, "seconds", 2) == {4}


@pytest.mark.parametrize("fields, field", [({"video_time": "clock"}, "video_time"),
                                           ({"video_time": "grid"}, "video_time"),
                                           ({"mrope_section": [16, 24, 24], "video_time": "seconds"},
                                            "tokens_per_second"),
                                           ({"mrope_section": [16, 24, 24], "video_time": "grid",
                                             "tokens_per_second": 2}, "tokens_per_second"),
                                           ({"mrope_section": [16, 24, 24], "video_time": "seconds",
                                             "tokens_per_second": -1}, "tokens_per_second")])
def test_bad_rules_name_their_field(fields, field):
    with pytest.raises(ExpectationError) as err:
        Expect(**fields)
    assert err.value.field == field and "\n" not in str(err.value)


def test_a_builder_without_rules_is_one_line_exit_2(capsys):
    """A plain builder needs a model's rules; an expectation without video_time is no model's."""
    for extra in ([], ["--expect", "llama3.1-8b"]):
        code = main(["check", f"{ROOT / 'examples' / 'position_ids.py'}:qwen2_vl", "--family", "position-ids", *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "video_time" in err and "qwen2-vl-7b" in err, err


def _results(report: Path) -> dict[str, list[dict]]:
    """Each target's results of the position-ids invariants (the others are not about a builder)."""
    return {i["target"].split(":")[1]: [r for r in i["results"] if r["invariant"].startswith("position-ids.")]
            for i in json.loads(report.read_text())["implementations"]}


def _word(name: str) -> str:
    return getattr(position_ids_bugs, name).__doc__.split(":")[0].strip()


TWINS = [n for n in dir(position_ids_bugs) if n.startswith("qwen2_5_vl_")]


def test_examples_pass_and_twins_fail_with_their_word(tmp_path):
    for f in ("position_ids.py", "position_ids_bugs.py"):
        shutil.copy(ROOT / "examples" / f, tmp_path / f)
    targets = ["position_ids.py:qwen2_5_vl", "position_ids.py:qwen2_5_vl_batch"] + \
              [f"position_ids_bugs.py:{n}" for n in TWINS]
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "ropespec", "check", *targets, "--family", "position-ids", "--expect",
                           "qwen2.5-vl-7b", "-j", "2", "--json", str(report)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    by_target = _results(report)
    assert [r["status"] for r in by_target["qwen2_5_vl_batch"]] == ["pass"] * 6
    plain = {r["invariant"]: r["status"] for r in by_target["qwen2_5_vl"]}
    assert plain == {**{f"position-ids.{k}": "pass" for k in ("text", "grid", "time", "resume")},
                     "position-ids.batch": "skip", "position-ids.decode": "skip"}
    assert len(TWINS) == 7
    for twin in TWINS:
        failed = [r for r in by_target[twin] if r["status"] in ("fail", "error")]
        assert failed, f"{twin} passed"
        assert {r["diagnosis"] for r in failed} == {_word(twin)}, [(r["invariant"], r["diagnosis"]) for r in failed]


def test_transformers_builders_and_the_flaw_in_them(tmp_path):
    """transformers' get_rope_index of Qwen2-VL and Qwen2.5-VL resumes after a video at its start plus max(h, w),
    inside the video's own temporal positions when it has more steps than cells per side; Qwen3-VL's and GLM-4.1V's
    frames of t = 1 never pass their spatial extent, and hold every rule."""
    pytest.importorskip("transformers")
    names = ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v"]
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "ropespec", "check",
                           *[f"implementations.adapters.hf_positions:{n}" for n in names], "--family", "position-ids",
                           "--profile", "ci", "--seed", "0", "-j", "2", "--json", str(report)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    by_target = _results(report)
    for name in names:
        failed = {r["invariant"]: r for r in by_target[name] if r["status"] != "pass"}
        if name in ("qwen3_vl", "glm4v"):
            assert failed == {}, name
            continue
        assert list(failed) == ["position-ids.resume"], (name, list(failed))
        r = failed["position-ids.resume"]
        assert r["diagnosis"] == "resume-offset" and "spatial extent" in r["message"], r["message"]
        assert dict(r["counterexample"])["segments"][1][0] == "video"
