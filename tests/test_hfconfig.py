"""config.json files map onto expectations; malformed ones give one line naming the field."""

import json
from pathlib import Path

import pytest

from ropespec import reference
from ropespec.cli import main
from ropespec.inputs import parse_expect
from ropespec.spec import ExpectationError, presets, tables
from ropespec.spec.hfconfig import from_hf_config, read

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
    ({"model_type": "llama", "hidden_size": 4096}, "config.json: num_attention_heads"),
    ({"hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"rope_type": "yarm", "factor": 2}},
     "config.json: rope_scaling.rope_type"),
    ({"model_type": "llama", "hidden_size": 4095, "num_attention_heads": 1}, "config.json: head_dim"),
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


def test_an_unknown_preset_points_to_the_list_of_the_known_ones(capsys):
    assert main(["check", "--expect", "llama-9000"]) == 2
    err = capsys.readouterr().err
    assert "ropespec presets lists the" in err and len(err.splitlines()) == 1, err
    assert main(["presets"]) == 0 and "llama3.1-8b" in capsys.readouterr().out


def _config(name: str, **changes) -> dict:
    transformers = pytest.importorskip("transformers")
    cfg = getattr(transformers, name)(**changes)
    return {"model_type": cfg.model_type, **cfg.to_dict()}


@pytest.mark.parametrize("name, head_dim, rotary_dim, convention, theta", [
    ("GPTJConfig", 256, 64, "interleaved", 10000.0),      # n_embd, n_head, n_positions, rotary_dim
    ("CodeGenConfig", 256, 64, "interleaved", 10000.0),
    ("GPTNeoXConfig", 96, 24, "half", 10000.0),           # partial_rotary_factor 0.25 in rope_parameters
    ("LlamaConfig", 128, 128, "half", 10000.0),
    ("MistralConfig", 128, 128, "half", 10000.0),
    ("Qwen2Config", 128, 128, "half", 10000.0),
    ("Phi3Config", 96, 96, "half", 10000.0),
    ("GemmaConfig", 256, 256, "half", 10000.0),
    ("Gemma3Config", 256, 256, "half", 1000000.0),        # text_config; per-layer-type rope_parameters
    ("DeepseekV3Config", 64, 64, "rope_interleave", 10000.0),  # qk_rope_head_dim; rope_interleave true
    ("GptOssConfig", 64, 64, "half", 150000.0),           # yarn in rope_parameters
])
def test_transformers_config_key_sets(name, head_dim, rotary_dim, convention, theta):
    e = from_hf_config(_config(name))
    assert (e.head_dim, e.rotary_dim, e.convention, e.rope_theta) == (head_dim, rotary_dim, convention, theta)


def test_phi3_keeps_the_original_length_at_the_top_level():
    from ropespec import reference

    d = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131072,
         "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
         "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48}}
    e = from_hf_config(d)
    assert e.rope_scaling["original_max_position_embeddings"] == 4096
    assert e.rope_scaling["factor"] == 32.0
    assert abs(reference.attention_factor(e) - 1.19024) < 1e-5


def test_deepseek_layouts():
    """rope_interleave (DeepSeek-V3's transformers default) reads interleaved pairs and writes half; DeepSeek-V2's
    transformers code rotates interleaved pairs in place; rope_interleave false is plain half."""
    base = {"hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "max_position_embeddings": 4096}
    assert from_hf_config({"model_type": "deepseek_v3", **base}).convention == "rope_interleave"
    assert from_hf_config({"model_type": "deepseek_v3", "rope_interleave": False, **base}).convention == "half"
    assert from_hf_config({"model_type": "deepseek_v2", **base}).convention == "interleaved"
    assert from_hf_config({"model_type": "llama4", **base}).convention == "interleaved"  # its complex-form apply
    assert from_hf_config({"model_type": "kimi", "rope_interleave": True, **base}).convention == "rope_interleave"


FIXTURES = Path(__file__).parent / "fixtures" / "configs"


@pytest.mark.parametrize("name, want", [
    ("gpt-j-6b", {"head_dim": 256, "rotary_dim": 64, "convention": "interleaved", "max_position": 2048}),
    ("gpt-neox-20b", {"head_dim": 96, "rotary_dim": 24, "convention": "half", "max_position": 2048}),
    ("phi-3-mini-128k", {"head_dim": 96, "convention": "half", "max_position": 131072, "rope_type": "longrope",
                         "factor": 32.0, "original": 4096}),
    ("gemma-3-4b", {"head_dim": 256, "rope_theta": 1e6, "rope_type": "linear", "factor": 8.0}),
    ("deepseek-v3", {"head_dim": 64, "convention": "rope_interleave", "max_position": 163840, "rope_type": "yarn",
                     "factor": 40.0, "original": 4096}),
])
def test_shipped_config_files_read_as_their_models(name, want):
    e = read(FIXTURES / f"{name}.json")
    got = {"head_dim": e.head_dim, "rotary_dim": e.rotary_dim, "convention": e.convention, "max_position": e.max_position,
           "rope_theta": e.rope_theta, "rope_type": e.rope_type, "factor": (e.rope_scaling or {}).get("factor"),
           "original": (e.rope_scaling or {}).get("original_max_position_embeddings")}
    assert {k: got[k] for k in want} == want


def test_the_deepseek_v3_config_is_its_preset():
    import numpy as np

    from ropespec import reference

    e, p = read(FIXTURES / "deepseek-v3.json"), presets.get("deepseek-v3")
    assert (e.head_dim, e.convention, e.max_position) == (p.head_dim, p.convention, p.max_position)
    assert np.array_equal(reference.thetas(e), reference.thetas(p))
    assert reference.attention_factor(e) == reference.attention_factor(p)


@pytest.mark.parametrize("config", [
    {"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12, "position_embedding_type": "absolute"},
    {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_positions": 1024},
    {"model_type": "t5", "d_model": 512, "num_heads": 8},
    {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "alibi": True},
], ids=["bert", "gpt2", "t5", "falcon-alibi"])
def test_a_config_without_a_rotary_embedding_is_one_line_exit_2(tmp_path, capsys, config):
    """A BERT or GPT-2 config was checked as head_dim 64, theta 10000 (exit 0), and T5's said hidden_size was None."""
    p = tmp_path / "config.json"
    p.write_text(json.dumps(config))
    code = main(["check", "ropespec.implementations.numpy_rope:make", "--expect", str(p)])
    err = capsys.readouterr().err
    assert code == 2 and "has no rotary embedding" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("fixture, preset", [("qwen2-vl-7b.json", "qwen2-vl-7b"), ("qwen2.5-vl-7b.json", "qwen2.5-vl-7b"),
                                             ("qwen3-vl-8b.json", "qwen3-vl-8b"), ("qwen3.5.json", "qwen3.5"),
                                             ("glm-4.1v.json", "glm-4.1v"), ("flux.1-dev-transformer.json", "flux.1-dev"),
                                             ("wan2.1-transformer.json", "wan2.1")])
def test_multi_axis_configs_read_as_their_presets(fixture, preset):
    """M-RoPE inside rope_scaling (Qwen2-VL's legacy type mrope, Qwen3-VL's interleaved flag), GLM-4.1V's
    interleaved pairs on half its dims, and diffusers' transformer configs (FLUX's axes_dims_rope, Wan's split)."""
    got, want = read(FIXTURES / fixture), presets.get(preset)
    assert (got.axes_kind(), got.pair_axes(), got.ladder()) == (want.axes_kind(), want.pair_axes(), want.ladder())
    assert (got.head_dim, got.rotary_dim, got.rope_theta, got.convention) == \
        (want.head_dim, want.rotary_dim, want.rope_theta, want.convention)
    # and the position-id builder's rule, by model type (the clock from vision_config)
    assert (got.params("position-ids").video_time, got.params("position-ids").tokens_per_second) == (want.params("position-ids").video_time, want.params("position-ids").tokens_per_second)


def test_a_multi_axis_config_whose_sections_do_not_add_up_is_one_line():
    bad = {"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
           "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 16]}}
    with pytest.raises(ExpectationError) as info:
        from_hf_config(bad)
    assert str(info.value).startswith("config.json: mrope_section: must be ") and "(sum 56)" in str(info.value)


def test_the_keys_the_transformers_sweep_found_missing():
    """What the sweep over every RoPE model type of transformers showed the reader lacked (benchmarks/
    transformers_sweep.py): head dims and head counts under Zamba2's, JetMoE's, DBRX's and Moonshine's keys, the model types whose code pairs interleaved,
    and per-layer-type rope_parameters where some layers have no RoPE (BEAM)."""
    from ropespec.spec.hfconfig import from_hf_config

    zamba2 = from_hf_config({"model_type": "zamba2", "hidden_size": 2560, "num_attention_heads": 32,
                             "attention_head_dim": 160, "kv_channels": 80, "rope_theta": 10000.0})
    jetmoe = from_hf_config({"model_type": "jetmoe", "hidden_size": 2048, "num_attention_heads": 32, "kv_channels": 128,
                             "rope_theta": 10000.0})
    dbrx = from_hf_config({"model_type": "dbrx", "d_model": 2048, "n_heads": 16, "rope_theta": 10000.0})
    moonshine = from_hf_config({"model_type": "moonshine", "hidden_size": 288, "decoder_num_attention_heads": 8,
                                "encoder_num_attention_heads": 8, "rope_theta": 10000.0})
    assert (zamba2.head_dim, jetmoe.head_dim, dbrx.head_dim, moonshine.head_dim) == (160, 128, 128, 36)
    for model_type in ("cohere", "ernie4_5", "glm4", "helium", "moonshine", "ergo"):
        assert from_hf_config({"model_type": model_type, "hidden_size": 1024, "num_attention_heads": 8,
                               "rope_theta": 10000.0}).convention == "interleaved", model_type
    # transformers 5.25's HY-V4 reads interleaved pairs and writes the half layout, as DeepSeek-V3's MLA does
    assert from_hf_config({"model_type": "hy_v4", "hidden_size": 1024, "num_attention_heads": 8,
                           "rope_theta": 10000.0}).convention == "rope_interleave"
    beam = from_hf_config({"model_type": "beam", "hidden_size": 1024, "num_attention_heads": 8, "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 20000.0}, "full_attention": None}})
    assert beam.rope_theta == 20000.0


def test_the_keys_the_transformers_sweep_found_missing_at_its_second_pass():
    """The sweep's second pass (each model's apply function as its attention calls it): heads that per_layer_config
    widens for the layer type checked (EmbeddingGemma 2), that layer type's own base beside a top-level one
    (DeepSeek-V4), MLA whose partial_rotary_factor is of the whole head (dots.llm3), the MLA models whose attention
    always reads pairs interleaved, a text config's ``<model>_text`` model type, and rope parameters that are not
    part of the table (Ministral 3's)."""
    from ropespec.spec.hfconfig import from_hf_config

    gemma = from_hf_config({"model_type": "embedding_gemma2_text", "hidden_size": 768, "num_attention_heads": 3,
                            "head_dim": 256, "layer_types": ["sliding_attention", "full_attention"],
                            "per_layer_config": {"01": {"head_dim": 512}}, "rope_parameters": {
                                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                "full_attention": {"rope_type": "default", "rope_theta": 1e6}}})
    assert (gemma.head_dim, gemma.rope_theta) == (512, 1e6)
    v4 = from_hf_config({"model_type": "deepseek_v4", "hidden_size": 4096, "num_attention_heads": 64, "head_dim": 512,
                         "qk_rope_head_dim": 64, "rope_theta": 10000.0, "rope_parameters": {
                             "main": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.125},
                             "compress": {"rope_type": "default", "rope_theta": 160000.0,
                                          "partial_rotary_factor": 0.125}}})
    assert (v4.head_dim, v4.rotary_dim, v4.rope_theta, v4.convention) == (64, 64, 160000.0, "interleaved")
    dots = from_hf_config({"model_type": "dots3_note_text", "hidden_size": 4096, "num_attention_heads": 32,
                           "head_dim": 256, "qk_rope_head_dim": 64, "rope_parameters": {
                               "rope_type": "default", "rope_theta": 8e7, "partial_rotary_factor": 0.25}})
    assert (dots.head_dim, dots.rotary_dim, dots.convention) == (64, 64, "rope_interleave")
    mla = {"hidden_size": 4096, "num_attention_heads": 32, "qk_rope_head_dim": 64, "rope_theta": 10000.0}
    for model_type in ("deepseek_v32", "glm_moe_dsa", "longcat_flash", "mistral_large4_text"):
        assert from_hf_config({"model_type": model_type, **mla}).convention == "rope_interleave", model_type
    assert from_hf_config({"model_type": "deepseek_v3", **mla, "rope_interleave": False}).convention == "half"
    ministral = from_hf_config({"model_type": "ministral3", "hidden_size": 4096, "num_attention_heads": 32,
                                "head_dim": 128, "max_position_embeddings": 262144, "rope_parameters": {
                                    "rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0,
                                    "original_max_position_embeddings": 16384, "max_position_embeddings": 262144,
                                    "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                    "llama_4_scaling_beta": 0.1}})
    assert ministral.rope_type == "yarn" and ministral.rope_scaling["factor"] == 16.0
    # its query temperature by position is the attention family's, read from the same rope parameters
    block = ministral.params("attention")
    assert (block.query_temperature_beta, block.query_temperature_length, block.query_temperature_offset) == (0.1, 16384, 0)
    assert "query temperature 1 + 0.1 ln(1 + floor((p) / 16384))" in ministral.describe()
    # and its attention's softmax scale is 1/sqrt(d) alone: mscale_all_dim 1 is YaRN's table, not DeepSeek's mscale^2
    assert not block.yarn_softmax_mscale and float(tables.score_temperature(ministral)) == 1.0


def test_a_model_that_turns_the_other_way_reads_as_the_reverse_direction():
    """nanochat turns by -p theta, as its checkpoints were trained: its config.json reads as that direction, so its
    own code is checked against what it computes; every other model keeps RoFormer's."""
    from ropespec.spec.hfconfig import from_hf_config

    config = {"model_type": "nanochat", "hidden_size": 1024, "num_attention_heads": 8, "rope_theta": 1e4}
    assert from_hf_config(config).direction == "reverse"
    assert from_hf_config(dict(config, model_type="llama")).direction == "forward"


@pytest.mark.parametrize("seq_first", [False, True])
def test_a_complex_form_apply_is_called_in_the_layout_it_broadcasts_its_table_over(seq_first):
    """Meta's apply_rotary_emb(xq, xk, freqs_cis), heads first (DeepSeek-V2's) or sequence first (Llama 4's), called
    as its attention calls it: the exact interleaved RoPE, its layout read from two rows (a call in the other layout on
    the caller's n rows would broadcast to n x n)."""
    torch = pytest.importorskip("torch")
    import numpy as np

    from ropespec import reference
    from ropespec.implementations.adapters.hf import complex_call
    from ropespec.spec.expectation import Expect

    e = Expect(head_dim=16, convention="interleaved", dtype="float64")
    inv = torch.tensor(reference.thetas(e))

    class Rotary(torch.nn.Module):  # transformers' forward: freqs_cis = polar(1, position_ids x inv_freq)
        def forward(self, x, position_ids):
            angles = position_ids[..., None].double() * inv
            return torch.polar(torch.ones_like(angles), angles)

    rotary = Rotary()

    def apply(xq, xk, freqs_cis):
        xq_ = torch.view_as_complex(xq.reshape(*xq.shape[:-1], -1, 2))
        f = freqs_cis[:, :, None, :] if seq_first else freqs_cis.unsqueeze(1)
        return torch.view_as_real(xq_ * f).flatten(3), None

    rope = complex_call(rotary, apply)
    x, p = np.random.default_rng(0).normal(size=(1024, 16)), np.arange(1024)
    got = rope(torch.tensor(x), torch.tensor(p)).numpy()
    assert got.shape == x.shape
    assert np.abs(got[:64] - reference.apply(e, x[:64], p[:64])).max() < 1e-9


def test_roformer_and_the_conformers_rotary_configs_are_read():
    """RoFormer's config names no rotary key (RoPE is its model, base 10000 implied, pairs interleaved); a Conformer
    speech encoder turns by RoPE only where position_embeddings_type says rotary (facebook/wav2vec2-conformer-rope-large),
    its base rotary_embedding_base, SeamlessM4T's heads its speech encoder's."""
    roformer = from_hf_config({"model_type": "roformer", "hidden_size": 768, "num_attention_heads": 12,
                               "max_position_embeddings": 1536})
    assert (roformer.head_dim, roformer.convention, roformer.rope_theta, roformer.max_position) == \
        (64, "interleaved", 10000.0, 1536)
    conformer = {"model_type": "wav2vec2-conformer", "hidden_size": 1024, "num_attention_heads": 16,
                 "position_embeddings_type": "rotary", "rotary_embedding_base": 10000}
    e = from_hf_config(conformer)
    assert (e.head_dim, e.convention, e.rope_theta) == (64, "half", 10000.0)
    with pytest.raises(ExpectationError, match="no rotary embedding"):
        from_hf_config({**conformer, "position_embeddings_type": "relative"})
    seamless = from_hf_config({"model_type": "seamless_m4t", "hidden_size": 1024, "speech_encoder_attention_heads": 16,
                               "position_embeddings_type": "rotary", "rotary_embedding_base": 10000})
    assert seamless.head_dim == 64


def test_hunyuans_fixed_ntk_alpha_is_read_as_ntk():
    """HunYuan's checkpoints say "type": "dynamic" beside an alpha (tencent/Hunyuan-A13B-Instruct), which transformers
    computes as a fixed NTK-alpha base, b alpha^(r/(r-2)), whatever the length: read as the ntk method of factor alpha
    (the reader refused the config for its alpha key); under a multi-axis RoPE, which takes no scaling, the ladder's base
    itself (HunyuanOCR's, the hunyuanocr preset's)."""
    a13b = from_hf_config({"model_type": "hunyuan_v1_moe", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128,
                           "rope_theta": 10000.0, "max_position_embeddings": 32768,
                           "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                                            "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}})
    assert a13b.rope_scaling == {"rope_type": "ntk", "factor": 1000.0}
    assert reference.thetas(a13b)[1] == pytest.approx((10000.0 * 1000.0 ** (128 / 126)) ** (-2 / 128), rel=1e-12)
    ocr = from_hf_config({"model_type": "hunyuan_vl", "hidden_size": 1024, "num_attention_heads": 8, "head_dim": 128,
                          "max_position_embeddings": 32768,
                          "rope_parameters": {"rope_type": "dynamic", "alpha": 1000.0, "rope_theta": 10000.0,
                                              "mrope_section": [16, 16, 16, 16]}})
    assert ocr.rope_scaling is None and ocr.mrope_section == (16, 16, 16, 16)
    assert ocr.rope_theta == pytest.approx(presets.get("hunyuanocr").rope_theta, rel=1e-15)


def test_a_methods_other_config_names_and_legacy_section_keys_are_read_as_transformers_reads_them():
    """HunyuanOCR's checkpoint names its NTK-alpha "xdrope" and its sections xdrope_section, which transformers'
    HunYuan-VL config reads as dynamic and mrope_section: the same expectation as the hunyuanocr preset. Phi-3's 2024
    checkpoints name LongRoPE "su". A legacy key disagreeing with the key it stands for is refused by name."""
    ocr = {"model_type": "hunyuan_vl", "hidden_size": 1024, "num_attention_heads": 8, "head_dim": 128,
           "max_position_embeddings": 32768, "rope_theta": 10000.0,
           "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                            "mscale_all_dim": 1.0, "type": "xdrope", "xdrope_section": [16, 16, 16, 16]}}
    e = from_hf_config(ocr)
    preset = presets.get("hunyuanocr")
    assert e.rope_scaling is None and e.mrope_section == preset.mrope_section
    assert e.rope_theta == pytest.approx(preset.rope_theta, rel=1e-15)
    both = dict(ocr, rope_scaling=dict(ocr["rope_scaling"], mrope_section=[16, 16, 16, 8]))
    with pytest.raises(ExpectationError, match=r"rope_scaling.xdrope_section: its legacy name for mrope_section must "
                                               r"equal mrope_section \[16, 16, 16, 8\]"):
        from_hf_config(both)
    factors = [1.0] * 48
    phi3 = from_hf_config({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
                           "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                           "rope_theta": 10000.0, "rope_scaling": {"type": "su", "long_factor": factors,
                                                                    "short_factor": factors}})
    assert phi3.rope_scaling["rope_type"] == "longrope", phi3.rope_scaling
