"""The position-ids family: the rule of ropespec.spec.positions on worked examples, and bad input answered in one line.
README's commands (tests/test_readme.py) run examples/position_ids.py's builders and their buggy twins from a scratch
folder, and transformers' own builders with the flaw ropespec found in them."""

import shutil
from pathlib import Path

import pytest

from ropespec.cli import main
from ropespec.spec import positions as rule
from ropespec.spec.expectation import Expect, ExpectationError

ROOT = Path(__file__).resolve().parents[1]


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
        Expect.from_dict(fields)
    assert err.value.field == field and "\n" not in str(err.value)


def test_a_builder_without_rules_is_one_line_exit_2(capsys):
    """A plain builder needs a model's rules; an expectation without video_time is no model's."""
    for extra in ([], ["--expect", "llama3.1-8b"]):
        code = main(["check", f"{ROOT / 'examples' / 'position_ids.py'}:qwen2_vl", "--family", "position-ids", *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "video_time" in err and "qwen2-vl-7b" in err, err


@pytest.mark.parametrize("name, preset", [("qwen2_vl", "qwen2-vl-7b"), ("qwen3_vl", "qwen3-vl-8b"),
                                          ("glm4v", "glm-4.1v")])
def test_the_plain_examples_pass(name, preset, tmp_path, monkeypatch):
    """README's model types: examples/position_ids.py's Qwen2-VL, Qwen3-VL and GLM-4.1V builders, loaded from a
    scratch folder through the Python API, hold every invariant about a one-sequence builder."""
    from ropespec.api import check

    shutil.copy(ROOT / "examples" / "position_ids.py", tmp_path / "position_ids.py")
    monkeypatch.chdir(tmp_path)
    result = check(f"position_ids.py:{name}", preset, family="position-ids", seed=0)
    verdicts = {r.invariant: r.status for rep in result.reports for r in rep.results
                if r.invariant.startswith("position-ids.")}
    assert verdicts == {**{f"position-ids.{k}": "pass" for k in ("text", "grid", "time", "resume")},
                        "position-ids.batch": "skip", "position-ids.decode": "skip"}, verdicts
    assert result.passed
