"""config.json files map onto expectations; malformed ones give one line naming the field."""

import json

import pytest

from ropespec.cli import main
from ropespec.inputs import parse_expect
from spec import ExpectationError, presets

LLAMA31 = {
    "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
LLAMA31_V5 = {
    "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
    "rope_parameters": {"rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
NEOX = {"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
        "rotary_emb_base": 10000, "max_position_embeddings": 2048}
GPTJ = {"model_type": "gptj", "n_embd": 4096, "hidden_size": 4096, "num_attention_heads": 16, "rotary_dim": 64,
        "max_position_embeddings": 2048}


@pytest.mark.parametrize("config, preset", [(LLAMA31, "llama3.1-8b"), (LLAMA31_V5, "llama3.1-8b"),
                                            (NEOX, "gpt-neox-20b"), (GPTJ, "gpt-j-6b")])
def test_configs_map_to_their_preset(tmp_path, config, preset):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(config))
    assert parse_expect(str(p)) == presets.get(preset)


def test_dynamic_config_tests_beyond_its_length(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
                             "rope_scaling": {"type": "dynamic", "factor": 2.0}}))
    e = parse_expect(str(p))
    assert e.rope_scaling["original_max_position_embeddings"] == 4096 and e.max_position == 8192


@pytest.mark.parametrize("config, field", [
    ({"hidden_size": 4096}, "config.json: num_attention_heads"),
    ({"hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"rope_type": "yarm", "factor": 2}},
     "config.json: rope_scaling.rope_type"),
    ({"hidden_size": 4095, "num_attention_heads": 1}, "config.json: head_dim"),
    ({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": [1, 2]},
     "config.json: rope_scaling"),
])
def test_malformed_config_is_one_line_exit_2(tmp_path, capsys, config, field):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(config))
    with pytest.raises(ExpectationError) as info:
        parse_expect(str(p))
    assert info.value.field == field
    assert main(["check", "--expect", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"--expect: {field}:" in err and len(err.strip().splitlines()) == 1


def test_unknown_preset_names_the_known_ones(capsys):
    assert main(["check", "--expect", "llama-9000"]) == 2
    assert "llama3.1-8b" in capsys.readouterr().err
