"""Every RoPE model type of the installed transformers, found by name and signature (implementations/adapters/
hf_models.py), and a fixed few of them checked here as the sweep checks them all (benchmarks/transformers_sweep.py):
the model's own rotary embedding and apply function under its config class's defaults, against the expectation the
config.json reader makes of that config."""

import inspect

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ropespec.implementations.adapters import hf_models  # noqa: E402
from ropespec import check  # noqa: E402
from ropespec.spec import presets  # noqa: E402

#: plain Llama; partial rotary that the apply function splits itself (Phi-3's, GPT-NeoX's) and that its attention
#: splits (StableLM); interleaved pairs (Cohere); pairs that turn the other way (nanochat); proportional RoPE, whose
#: last pairs stay still over the whole head (Gemma 4); complex-form apply functions, heads first (DeepSeek-V2) and
#: sequence first (Llama 4); and one the adapter cannot call (a vision tower's only)
SUBSET = ("llama", "gpt_neox", "stablelm", "cohere", "nanochat", "gemma4", "deepseek_v2", "llama4", "pixtral")


def test_discovery_reads_every_modeling_module_and_keeps_one_model_type_each():
    found = hf_models.candidates()
    types = [t for t, _, _ in found]
    assert len(found) >= 180 and len(set(m for _, m, _ in found)) == len(found)
    assert {"llama", "stablelm", "cohere", "qwen2_vl", "gpt_neox"} <= set(types)
    assert "qwen2_vl_text" not in types  # a sub-model of qwen2_vl's module


@pytest.fixture(scope="module")
def subset():
    return {f.model_type: f for f in hf_models.discover(SUBSET)}


def test_a_model_type_that_cannot_be_checked_says_why(subset):
    assert not subset["pixtral"].checkable and "vision" in subset["pixtral"].reason
    assert "hf_axes:pixtral checks it" in subset["pixtral"].reason  # its 2-D axial rotary: the hf_axes adapter's


def test_an_apply_function_a_hub_kernel_wraps_is_read_by_the_function_it_calls():
    """transformers 5.25 decorates apply_rotary_pos_emb with the kernels package's use_kernel_forward_from_hub, which
    turns the function into an nn.Module instance whose forward calls it (signature (*args, **kwargs)): its form is
    the wrapped function's."""
    kernels = pytest.importorskip("kernels")

    def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
        return q, k

    wrapped = kernels.use_kernel_forward_from_hub("rotary_pos_emb")(apply_rotary_pos_emb)
    assert not inspect.isfunction(wrapped)
    assert hf_models._function_of(wrapped) is apply_rotary_pos_emb
    assert hf_models._form(hf_models._function_of(wrapped)) == "qk"
    assert hf_models._function_of(object()) is None


def test_apply_functions_defined_and_never_called_are_no_rope_model():
    """Zamba's modeling module (transformers 5.25) defines rotate_half and apply_rotary_pos_emb and its attention calls
    neither, as Jamba's and Nemotron-H's: no RoPE model, by the rule, not by a list; a decorator naming the function
    is no call of it."""
    source = ("def apply_rotary_pos_emb(q, k, cos, sin):\n    return q, k\n\n"
              "@use_kernelized_func(apply_rotary_pos_emb)\nclass ZambaAttention:\n    pass\n")
    assert "not a RoPE model" in hf_models._unused_applies(source)
    assert hf_models._unused_applies(source + "x = apply_rotary_pos_emb(q, k, cos, sin)\n") is None
    found = {f.model_type: f for f in hf_models.discover(("zamba", "jamba", "nemotron_h")) if f.model_type}
    assert all("not a RoPE model" in (f.reason or "") for f in found.values()), {t: f.reason for t, f in found.items()}


def test_a_tower_is_told_by_what_follows_the_models_own_name():
    """A tower's class says Vision, Audio, 2D, ... after the model's own name: Granite 4 Vision's text rotary, Higgs
    Audio V2's language model's and Nemotron 3 Diarization's ('3D' inside its name) are the main model's, and found."""
    assert hf_models._tower("Qwen2VLVisionRotaryEmbedding", "Qwen2VL")
    assert hf_models._tower("Qwen2_5_VisionRotaryEmbedding", "Qwen2_5_VL")  # no prefix to strip: the whole name
    for name, prefix in [("Granite4VisionTextRotaryEmbedding", "Granite4Vision"),
                         ("HiggsAudioV2RotaryEmbedding", "HiggsAudioV2"),
                         ("Nemotron3DiarizationRotaryEmbedding", "Nemotron3Diarization")]:
        assert not hf_models._tower(name, prefix), name
    found = {f.model_type: f for f in hf_models.discover(("granite4_vision", "higgs_audio_v2", "pe_audio"))}
    assert all(f.checkable for f in found.values()), {t: f.reason for t, f in found.items()}


@pytest.mark.parametrize("model_type", [t for t in SUBSET if t != "pixtral"])
def test_the_subset_holds_under_its_own_config(model_type, subset):
    f = subset[model_type]
    assert f.checkable, f.reason
    expect = hf_models.expectation_of(f)
    result = check(f"ropespec.implementations.adapters.hf_models:{model_type}", expect, array="torch", profile="ci", seed=1,
                   invariants=["rope.conformance", "rope.partial-passthrough"])
    assert result.passed, result.report()


def test_the_expectations_say_what_the_code_computes(subset):
    """The subset's two 2026 forms are read as such: Gemma 4's global layers' proportional RoPE over the whole head,
    nanochat's reverse direction."""
    gemma = hf_models.expectation_of(subset["gemma4"])
    assert gemma.rope_type == "proportional" and gemma.rotary_dim == gemma.head_dim
    assert gemma == presets.get("gemma-4")  # the preset is what transformers' Gemma 4 config reads as: one expectation
    assert hf_models.expectation_of(subset["nanochat"]).direction == "reverse"


def test_the_other_direction_is_named_where_the_expectation_says_roformer_s(subset):
    """nanochat's own code under RoFormer's direction: failed with the word, and the expectation that holds named."""
    expect = hf_models.expectation_of(subset["nanochat"]).replace(direction="forward")
    result = check("ropespec.implementations.adapters.hf_models:nanochat", expect, array="torch", profile="ci", seed=1,
                   invariants=["rope.conformance"])
    assert not result.passed and {x.diagnosis for x in result.results if x.status == "fail"} == {"direction"}, result.report()
    assert '"direction": "reverse"' in result.report()


def test_the_apply_function_is_the_one_its_attention_calls():
    """DeepSeek-V3.2's module has both apply functions, its indexer calls the half one and its attention the
    interleaved one: the attention's is checked. Gemma 3n's takes one tensor at a time (x, cos, sin)."""
    found = {f.model_type: f for f in hf_models.discover(("deepseek_v32", "gemma3n", "gptj"))}
    assert found["deepseek_v32"].apply == "apply_rotary_pos_emb_interleave"
    assert hf_models.expectation_of(found["deepseek_v32"]).convention == "rope_interleave"
    assert (found["gemma3n"].apply, found["gemma3n"].takes) == ("apply_rotary_pos_emb", "x")
    assert not found["gptj"].checkable and "ropespec.implementations.adapters.hf:gptj" in found["gptj"].reason
    result = check("ropespec.implementations.adapters.hf_models:gemma3n", hf_models.expectation_of(found["gemma3n"]),
                   array="torch", profile="ci", seed=1, invariants=["rope.conformance"])
    assert result.passed, result.report()


def test_another_expectation_is_declined_not_checked(subset):
    result = check("ropespec.implementations.adapters.hf_models:llama", "llama3.1-8b", array="torch", profile="ci", seed=1,
                   invariants=["rope.conformance"], allow_skip=True)
    said = result.nothing_checked()[0]
    assert result.unchecked and "default config only" in said, result.report()
    # each field as --expect writes it: JSON, never a Python repr of the frozen mapping
    assert ('rope_scaling null where the expectation has {"rope_type": "llama3", "factor": 8.0' in said
            and "mappingproxy" not in said), said


def test_what_hf_models_cannot_call_an_adapter_of_its_own_checks(subset):
    """The sweep's rows beyond each model type's own rotary code: every hf_axes adapter of a found model type's module
    under the preset it names (Pixtral's 2-D rotary), and the hand-written adapter of a form hf_models cannot call
    (GPT-J's); the expectation each is checked under is a preset's or the reader's of the default config."""
    found = hf_models.discover(("pixtral", "gptj", "llama"))
    by = {a.label: a for a in hf_models.adapters(found)}
    assert set(by) == {"hf_axes:pixtral", "hf:gptj"}, by  # llama: its own rotary code is checked; nothing more
    assert by["hf_axes:pixtral"].expectation().axes_kind() == "parity"
    assert by["hf:gptj"].preset is None and by["hf:gptj"].expectation() == hf_models.expectation("gptj")
    result = check(by["hf:gptj"].target, by["hf:gptj"].expectation(), array="torch", profile="ci", seed=1,
                   invariants=["rope.conformance"])
    assert result.passed, result.report()


def test_a_rotary_is_built_from_the_config_that_states_it_and_the_released_sizes():
    """BLT's and Nemotron 3 Diarization's outer configs state no RoPE (their towers build the rotary from their own:
    the first sub-config that states one), Nemotron 3.5 Transcribe's is its ASR encoder's, two levels down; where the
    config class's defaults are no model (GLM-4.5's 96 heads of 4096 / 96 dims, no head_dim), the released model's
    values are set (hf_models.RELEASED), and BLT's towers pair interleaved, as its rotate_half does."""
    found = {f.model_type: f for f in hf_models.discover(("blt", "nemotron3_diarization", "nemo_speechlm", "glm4_moe",
                                                          "cohere_compass"))}
    assert all(f.checkable for f in found.values()), {t: f.reason for t, f in found.items()}
    assert type(hf_models._rotary_config(found["nemo_speechlm"])).__name__ == "Nemotron3_5TranscribeAsrAudioConfig"
    glm = hf_models.expectation_of(found["glm4_moe"])
    assert (glm.head_dim, glm.rotary_dim) == (128, 64)
    assert hf_models.expectation_of(found["blt"]).convention == "interleaved"
    assert hf_models.expectation_of(found["cohere_compass"]).rope_theta == 50000.0  # its sliding layers' RoPE
    for model_type in ("blt", "glm4_moe"):
        result = check(f"ropespec.implementations.adapters.hf_models:{model_type}",
                       hf_models.expectation_of(found[model_type]), array="torch", profile="ci", seed=1,
                       invariants=["rope.conformance"])
        assert result.passed, result.report()


def test_codegens_attention_hands_its_turned_queries_on_in_their_own_dtype():
    """CodeGen turns q in its float32 table and its attention casts q back (query.to(value.dtype)): the adapter
    hands on what the attention does, so bfloat16 in is bfloat16 out (GPT-J's rotary casts its table instead)."""
    e = hf_models.expectation("codegen").replace(dtype="bfloat16")
    result = check("ropespec.implementations.adapters.hf:codegen", e, array="torch", profile="ci", seed=1,
                   invariants=["contract.shape-finite", "rope.conformance"])
    assert result.passed, result.report()


def test_rope_of_other_forms_is_found_and_each_is_checked_or_said_to_be_none():
    """Modules whose RoPE is no *RotaryEmbedding(x, position_ids) class are found by their source too: RoFormer's
    sinusoidal table and the Conformers' rotary are checked by hf_other's adapters, DINOv3's by hf_axes'; Jamba's
    apply_rotary_pos_emb, never called, is said to be no RoPE."""
    found = {f.model_type: f for f in hf_models.discover(("roformer", "wav2vec2-conformer", "dinov3_vit", "jamba"))}
    assert set(found) == {"roformer", "wav2vec2-conformer", "dinov3_vit", "jamba"}
    assert "not a RoPE model" in found["jamba"].reason
    by = {a.model_type: a for a in hf_models.adapters(tuple(found.values()))}
    assert set(by) == {"roformer", "wav2vec2-conformer", "dinov3_vit"}, by
    assert by["dinov3_vit"].label == "hf_axes:dinov3"
    roformer = by["roformer"].expectation()
    assert (roformer.head_dim, roformer.convention, roformer.rope_theta) == (64, "interleaved", 10000.0)
    for model_type in ("roformer", "wav2vec2-conformer"):
        for dtype in ("float32", "bfloat16"):
            result = check(by[model_type].target, by[model_type].expectation().replace(dtype=dtype), array="torch",
                           profile="ci", seed=1, invariants=["rope.conformance", "contract.shape-finite"])
            assert result.passed, result.report()


def test_vjepa2s_3d_rope_is_no_rotation():
    """README's genuine flaw: V-JEPA 2 lays its angles out by repeat where its pairs are interleaved, so dims 2i and
    2i + 1 turn at two frequencies; its code fails [not-a-rotation] under what it means to compute, and README's
    reproduction without ropespec prints a unit pair's norm 0.665."""
    import torch
    from transformers.models.vjepa2.modeling_vjepa2 import rotate_queries_or_keys

    result = check("ropespec.implementations.adapters.hf_other:vjepa2", "vjepa2-vitl", array="torch", profile="ci",
                   seed=1, invariants=["rope.norm-per-pair", "rope.conformance", "axes.separation"])
    by = {r.property: r for r in result.reports[0].results if r.applicable}
    assert by["norm_per_pair"].status == "fail" and by["norm_per_pair"].diagnosis == "not-a-rotation"
    assert by["separation"].status == "pass"  # each axis's dims turn with their own axis only
    x = torch.zeros(1, 1, 1, 20)
    x[..., 0] = 1.0
    y = rotate_queries_or_keys(x, pos=torch.tensor([1]))
    assert abs(y[..., :2].norm().item() - 0.66499) < 1e-4


def test_clvps_rotary_holds_in_float32_and_hands_float32_on_in_bfloat16():
    """README's genuine flaw: CLVP's encoder rotary holds every RoPE invariant in float32; in bfloat16, built as
    from_pretrained builds it (its inv_freq float32), it hands q on in float32 (contract.shape-finite, [shape]), and
    README's reproduction without ropespec shows the encoder then raises in its out_proj."""
    import torch
    import transformers
    from transformers.models.clvp import modeling_clvp

    [adapter] = [a for a in hf_models.adapters(hf_models.discover(("clvp",))) if a.model_type == "clvp"]
    assert adapter.expectation() == presets.get("clvp")
    good = check(adapter.target, "clvp", array="torch", profile="ci", seed=1)
    assert good.passed, good.report()
    bad = check(adapter.target, presets.get("clvp").replace(dtype="bfloat16"), array="torch", profile="ci", seed=1,
                invariants=["contract.shape-finite", "rope.conformance"])
    by = {r.invariant: r for r in bad.reports[0].results if r.applicable}
    assert by["contract.shape-finite"].diagnosis == "shape" and "dtype=float32" in by["contract.shape-finite"].message
    assert by["rope.conformance"].status == "pass"  # its values are right: float32 is what it hands on
    config = transformers.ClvpEncoderConfig(hidden_size=128, num_attention_heads=2, projection_dim=128,
                                            num_hidden_layers=1, intermediate_size=256)
    encoder = modeling_clvp.ClvpEncoder._from_config(config, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype"):
        encoder(input_ids=torch.randint(0, 200, (1, 10)))
