"""The position-ids family: the rule of ropespec.spec.positions on worked examples, and bad input answered in one line.
README's commands (tests/test_readme.py) run examples/position_ids.py's builders and their buggy twins from a scratch
folder, and transformers' own builders with the flaw ropespec found in them."""

import shutil
from pathlib import Path

import pytest

from ropespec.cli import main
from ropespec.implementations.zoo import members
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


def test_framing_lengthens_the_text_around_every_block():
    """framed() states the rule once: a run between two blocks is at least after + before tokens, a block first or last
    gets its framing; a sequence that honours the framing is its own framing, and the default asks one token before."""
    two = [("text", 1), ("image", (1, 1, 1)), ("text", 1), ("image", (1, 1, 1))]
    assert rule.framed(two, (1, 1)) == [("text", 1), ("image", (1, 1, 1)), ("text", 2), ("image", (1, 1, 1)),
                                        ("text", 1)]
    assert rule.framed(two) == two and rule.FRAMING == (1, 0)
    assert rule.framed([("image", (1, 2, 2)), ("video", (2, 1, 1), 0.5)], (2, 3)) == [
        ("text", 2), ("image", (1, 2, 2)), ("text", 5), ("video", (2, 1, 1), 0.5), ("text", 3)]
    assert rule.framed([("image", (1, 2, 2)), ("image", (1, 1, 1))], (0, 0)) == [("image", (1, 2, 2)),
                                                                                ("image", (1, 1, 1))]


@pytest.mark.parametrize("framing", [(1, 0), (0, 0), (1, 1), (2, 3)])
def test_drawn_and_pinned_sequences_honour_the_framing(framing):
    """Every sequence the position properties draw or pin, one at a time or as a batch row, is framed as the
    expectation says (built so, not filtered); under the default framing the pinned ones are those of an expectation
    that states none."""
    from hypothesis import given, settings, strategies as st

    from ropespec.properties import test_positions as props
    from ropespec.spec import presets

    base = presets.get("qwen2.5-vl-7b")
    e = Expect.from_dict({**base.to_dict(), "vision_framing": list(framing)})
    assert e.params("position-ids").vision_framing == framing

    @settings(max_examples=200, database=None, deadline=None)
    @given(st.data())
    def honours(data):
        seq = data.draw(props._sequence(e))
        assert seq and seq[0][0] == "text" and rule.framed(seq, framing) == seq, seq

    honours()
    for seq in props._pinned_sequences(e):
        assert rule.framed(seq, framing) == seq
    if framing == rule.FRAMING:
        assert props._pinned_sequences(e) == props._pinned_sequences(base)


@pytest.mark.parametrize("fields, field", [({"video_time": "clock"}, "video_time"),
                                           ({"video_time": "grid"}, "video_time"),
                                           ({"mrope_section": [16, 24, 24], "video_time": "seconds"},
                                            "tokens_per_second"),
                                           ({"mrope_section": [16, 24, 24], "video_time": "grid",
                                             "tokens_per_second": 2}, "tokens_per_second"),
                                           ({"mrope_section": [16, 24, 24], "video_time": "seconds",
                                             "tokens_per_second": -1}, "tokens_per_second"),
                                           ({"mrope_section": [16, 24, 24], "vision_framing": [1]}, "vision_framing"),
                                           ({"mrope_section": [16, 24, 24], "vision_framing": [1, 17]},
                                            "vision_framing"),
                                           ({"mrope_section": [16, 24, 24], "vision_framing": [1.0, 1]},
                                            "vision_framing"),
                                           ({"vision_framing": [1, 1]}, "vision_framing")])
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


def test_the_framing_is_stated_once_and_travels_with_the_expectation():
    """vision_framing reads in a file and --expect as [before, after], prints in the expectation's line, survives a
    round trip, and goes where video_time goes when the expectation stops being an M-RoPE of t, h, w; an expectation
    that states none writes none."""
    from ropespec.spec import presets

    base = presets.get("qwen2.5-vl-7b")
    assert "vision_framing" not in base.to_dict() and "framed" not in base.describe()
    e = Expect.from_dict({**base.to_dict(), "vision_framing": [1, 1]})
    assert e.to_dict()["vision_framing"] == (1, 1) and Expect.from_json(e.to_json()) == e
    assert "vision blocks framed by 1 text token before and 1 after" in e.describe()
    assert e.replace(dtype="bfloat16").params("position-ids").vision_framing == (1, 1)
    assert "vision_framing" not in e.replace(mrope_section=None).to_dict()


def _thinker(model_type: str, rope: dict, **top) -> dict:
    """A thinker's config.json as transformers 5.25 writes it (the text model nested, its rope parameters)."""
    return {"model_type": model_type, **top,
            "text_config": {"model_type": model_type.replace("thinker", "text"), "hidden_size": 3584,
                            "num_attention_heads": 28, "head_dim": 128, "max_position_embeddings": 32768,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, **rope}}}


def test_the_omni_thinkers_configs_say_their_framing():
    """A Qwen2.5-Omni thinker's config.json reads as its clock (position_id_per_seconds, 25 by default) and its framing
    [1, 1]; Qwen3-Omni's as its framing alone (its video positions are fractional: no time rule); Qwen2.5-VL's
    framing stays the default, as its preset's."""
    from ropespec.spec import presets
    from ropespec.spec.hfconfig import from_hf_config

    omni = from_hf_config(_thinker("qwen2_5_omni_thinker", {"mrope_section": [16, 24, 24]}))
    rules = omni.params("position-ids")
    assert (rules.video_time, rules.tokens_per_second, rules.vision_framing) == ("seconds", 25.0, (1, 1))
    assert from_hf_config(_thinker("qwen2_5_omni_thinker", {"mrope_section": [16, 24, 24]},
                                   position_id_per_seconds=13)).params("position-ids").tokens_per_second == 13
    qwen3 = from_hf_config(_thinker("qwen3_omni_moe_thinker", {"mrope_section": [24, 20, 20],
                                                               "mrope_interleaved": True}))
    assert (qwen3.params("position-ids").video_time, qwen3.params("position-ids").vision_framing) == (None, (1, 1))
    assert presets.get("qwen2.5-vl-7b").params("position-ids").vision_framing == rule.FRAMING


POSITION_MEMBERS = [m for m in members() if m.shape.family == "position-ids"]


@pytest.mark.parametrize("member", POSITION_MEMBERS, ids=[m.name for m in POSITION_MEMBERS])
def test_zoo_members_are_caught_under_a_framed_expectation(member):
    """Framing the blocks as Qwen2.5-Omni's prompts are ([1, 1]) leaves every position-id fault in reach: each zoo
    member still fails the property it targets, with its own word."""
    from ropespec.implementations.loader import LoadRequest
    from ropespec.properties.framework import all_properties, run_property
    from ropespec.spec import presets

    base = member.expect or presets.get("qwen2.5-vl-7b").to_dict()
    e = Expect.from_dict({**base, "vision_framing": [1, 1]})
    impl = LoadRequest(member.target, name=member.name, array=member.array, expect=e, dtype=e.dtype,
                       shape=member.shape).load()
    try:
        for target in member.targets:
            prop = next(p for p in all_properties() if p.invariant == target)
            r = run_property(prop, impl, profile="ci", seed_value=0)
            assert (r.status, r.diagnosis) == ("fail", member.diagnosis), (target, r.status, r.message)
            for seq in r.counterexample.get("rows") or [r.counterexample["segments"]]:
                seq = [(s[0], s[1]) if s[0] == "text" else (s[0], tuple(s[1]), *s[2:]) for s in seq]
                assert rule.framed(seq, (1, 1)) == seq, seq
    finally:
        impl.close()
