"""Cross-check with transformers (skipped when it is not installed): its own rope init functions
against our reference, and its real Llama rotary code run as an implementation under test."""

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from ropespec import reference  # noqa: E402
from ropespec.implementations import CallShape  # noqa: E402
from ropespec.implementations.adapters.hf import config_for  # noqa: E402
from ropespec.properties.framework import all_properties, PROPERTIES, run_property  # noqa: E402
from ropespec.inputs import load_implementations  # noqa: E402
from ropespec.spec import Expect, methods, presets, tolerance  # noqa: E402

all_properties()

#: every transformers scaling type's canonical examples (ropespec.spec.methods), and the unscaled ladder
TYPES = {"default": None, **{name: d for m in methods.REGISTRY.values() if m.scales and m.hf_name
                             for name, d in m.examples(64, 2048).items()}}
CASES = [(k, Expect(head_dim=128, rope_theta=5e5, max_position=131072, rope_scaling=v))
         for k, v in TYPES.items()] + [(n, presets.get(n)) for n in presets.rotary() if presets.get(n).shared_ladder()]
# (a per-axis or parity ladder is no 1-D rope_init's: the multi-axis adapters' tests check those against the models)


def _hf(expect, seq_len=None):
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    config = config_for(expect)
    if not expect.method.scales:  # GPT-NeoX's default honours partial_rotary_factor; Llama's does not
        inv, g = GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv, g = ROPE_INIT_FUNCTIONS[expect.method.hf_name](config, "cpu", seq_len=seq_len)
    return inv.double().numpy(), float(g)


@pytest.mark.parametrize("name, expect", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seq_len", [None, 1024, 16384])
def test_reference_matches_transformers_rope_init(name, expect, seq_len):
    inv, g = _hf(expect, seq_len)
    ours = reference.thetas(expect, seq_len)
    # their float32 computation: the tolerance model's float32 inverse-frequency error
    rel = tolerance.inv_freq_relative_error(expect.replace(inv_freq_dtype="float32"))
    assert np.all(np.abs(inv - ours) <= rel * ours + 1e-45), name
    assert g == pytest.approx(reference.attention_factor(expect), rel=1e-6)


@pytest.mark.parametrize("preset", ["llama2-7b", "llama3.1-8b", "qwen2.5-7b-yarn", "gpt-oss"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_transformers_llama_rotary_passes_conformance(preset, dtype):
    [impl] = load_implementations(["ropespec.implementations.adapters.hf:make"], expect=presets.get(preset), array="torch", dtype=dtype)
    for prop in ("conformance", "large_positions"):
        result = run_property(PROPERTIES[prop], impl, profile="dev", seed_value=0)
        assert result.status == "pass", result.message


@pytest.mark.parametrize("target, preset, dtype", [
    ("llama_table", "llama3.1-8b", "float32"), ("llama_table", "llama3.1-8b", "bfloat16"),
    ("qwen2_table", "qwen2.5-7b-yarn", "bfloat16"), ("deepseek_v3_table", "deepseek-v3", "float32"),
    ("gpt_neox_table", "gpt-neox-20b", "bfloat16"), ("gpt_oss_table", "gpt-oss", "float32")])
def test_transformers_rotary_embedding_as_a_table_passes(target, preset, dtype):
    """--form table on the model type's own RotaryEmbedding.forward: per-dim cos/sin with the attention factor in
    them (YaRN), the rope_interleave model's half-layout table, partial rotary; float32 and bfloat16."""
    import ropespec.properties.test_table  # noqa: F401  (registers table.angles)

    [impl] = load_implementations([f"ropespec.implementations.adapters.hf:{target}"], expect=presets.get(preset), array="torch",
                               dtype=dtype, shape=CallShape(form="table"))
    result = run_property(PROPERTIES["angles"], impl, profile="dev", seed_value=0)
    assert result.status == "pass", result.message


@pytest.mark.parametrize("target, preset, dtype", [
    ("llama_qk", "llama3.1-8b", "float32"), ("llama_qk", "llama3.1-8b", "bfloat16"), ("deepseek_v3_qk", "deepseek-v3", "float32"),
    ("gpt_neox_qk", "gpt-neox-20b", "bfloat16"), ("gpt_oss_qk", "gpt-oss", "bfloat16")])
def test_transformers_apply_function_as_qk_passes(target, preset, dtype):
    """--form qk on the model type's own apply_rotary_pos_emb: batches, grouped-query heads and per-row positions
    drawn; DeepSeek-V3's interleave variant; GPT-NeoX's partial rotary; GPT-OSS's table of one value per pair
    (checked per dim it failed: a false failure of correct code, until the adapter said table = "pair")."""
    import ropespec.properties.test_kernel  # noqa: F401  (registers kernel.qk)

    [impl] = load_implementations([f"ropespec.implementations.adapters.hf:{target}"], expect=presets.get(preset), array="torch",
                               dtype=dtype, shape=CallShape(form="qk"))
    result = run_property(PROPERTIES["qk"], impl, profile="dev", seed_value=0)
    assert result.status == "pass", result.message


def test_transformers_table_and_apply_checked_together():
    """--form qk --table: Llama's own RotaryEmbedding and apply_rotary_pos_emb of one library, the table handed to
    the apply function as the library hands it (bfloat16 cos/sin), checked as one apply function."""
    from ropespec.implementations import load_implementation
    from ropespec.implementations.adapters import hf

    # in this process, which has imported transformers already (tests/test_forms.py runs --table through a worker)
    impl = load_implementation(hf.llama_qk, expect=presets.get("llama3.1-8b"), array="torch", dtype="bfloat16",
                           shape=CallShape(form="qk", table=hf.llama_table), isolate=False)
    assert impl.form.name == "apply" and impl.shape.flags() == ["--form", "qk", "--table", "llama_table"]
    for prop in ("conformance", "large_positions"):
        result = run_property(PROPERTIES[prop], impl, profile="dev", seed_value=0)
        assert result.status == "pass", (prop, result.message)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_transformers_dynamic_ntk_cache_is_caught_in_every_run(seed):
    """transformers #25306, and its reset fix: the dynamic table a longer call grows is kept for every length between
    the original and the cached one, so the same call answers differently after a longer one. The history probe
    (contract.deterministic:history) finds it whatever the seed; it had been found when a draw happened to make a long
    call first (nondeterministic in one run, pass in another)."""
    e = Expect(rope_theta=1e4, max_position=8192,
               rope_scaling={"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048})
    [impl] = load_implementations(["ropespec.implementations.adapters.hf:make"], expect=e, array="torch", dtype="float32")
    try:
        result = run_property(PROPERTIES["history"], impl, profile="dev", seed_value=seed)
    finally:
        impl.close()
    assert result.status == "fail" and result.diagnosis == "nondeterministic", result.message
    assert "after one of length 8192" in result.message


def test_text_only_position_ids_feed_1d_rope_through_the_models_own_code():
    """End to end, on transformers' code alone: Qwen2-VL's get_rope_index on a left-padded text-only batch gives its
    rows 0 ... n - 1 on every axis, and its rotary embedding and apply function turn them exactly as 1-D RoPE does
    (position-ids.text, then axes.text-reduction), to the float32 class's bound."""
    import torch

    from ropespec.implementations.adapters import hf_axes, hf_positions
    from ropespec.reference import fast

    e = presets.get("qwen2-vl-7b")
    pos, nxt = hf_positions.qwen2_vl(e)([[("pad", 2), ("text", 5)], [("text", 7)]])
    assert pos[0, 2:].tolist() == [[p] * 3 for p in range(5)] and pos[1].tolist() == [[p] * 3 for p in range(7)]
    assert nxt.tolist() == [[5] * 3, [7] * 3]
    x = np.random.default_rng(0).standard_normal((7, e.head_dim))
    got = hf_axes.qwen2_vl(e)(torch.tensor(x, dtype=torch.float32), torch.tensor(pos[1])).double().numpy()
    want = fast.apply(e.replace(mrope_section=None), x, pos[1][:, 0])
    a, b = (list(ix) for ix in zip(*e.pairs()))
    bound = tolerance.component_bound(e, pos[1][:, 0].astype(float), reference.thetas(e), np.hypot(x[:, a], x[:, b]))
    assert np.all(np.abs(got[:, a] - want[:, a]) <= bound) and np.all(np.abs(got[:, b] - want[:, b]) <= bound)


_DS = {"head_dim": 64, "rope_theta": 10000.0, "max_position": 163840, "rope_scaling": {
    "rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1}}
DEEPSEEK = {  # each model's own scaling fields (V3: mscale 1, mscale_all_dim 1; V2: both 0.707) and pairing
    "deepseek_v3": dict(_DS, convention="rope_interleave", n_heads=4, n_kv_heads=2, rope_scaling=dict(
        _DS["rope_scaling"], mscale=1.0, mscale_all_dim=1.0)),
    "deepseek_v2": dict(_DS, convention="interleaved", n_heads=4, n_kv_heads=4, rope_scaling=dict(
        _DS["rope_scaling"], mscale=0.707, mscale_all_dim=0.707)),
}

PLAIN_SCALE = '''
from ropespec.implementations.adapters import hf_attention


def make(expect):
    """transformers' DeepSeek-V3 attention with a plain model's softmax scale: mscale(s, mscale_all_dim)^2 left out."""
    attend = hf_attention.deepseek_v3(expect)
    attend.module.scaling = expect.head_dim ** -0.5
    return attend
'''


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("model_type", list(DEEPSEEK))
def test_deepseek_attention_as_its_model_computes_it_passes(model_type, dtype):
    """transformers' DeepSeek-V2/V3 attention (its rotary, apply function, softmax scale and eager attention) holds
    every attention invariant under the model's own config: cos and sin carry mscale/mscale_all_dim and the softmax
    scale mscale_all_dim's square, which together are the expectation's attention."""
    from ropespec import check

    result = check(f"ropespec.implementations.adapters.hf_attention:{model_type}", expect=DEEPSEEK[model_type],
                   family="attention", array="torch", dtype=dtype, seed=0)
    statuses = {r.property: r.status for r in result.reports[0].results if r.applicable}
    assert len(statuses) >= 5 and set(statuses.values()) == {"pass"}, statuses


def test_deepseek_attention_without_its_softmax_temperature_is_named(tmp_path):
    from ropespec import check

    (tmp_path / "plain_scale.py").write_text(PLAIN_SCALE)
    result = check(f"{tmp_path / 'plain_scale.py'}:make", expect=DEEPSEEK["deepseek_v3"], family="attention",
                   array="torch", seed=0)
    failed = [r for r in result.reports[0].results if r.status == "fail"]
    assert failed and {r.diagnosis for r in failed} == {"attention-factor"}, [(r.property, r.diagnosis) for r in failed]
    assert all("lacks DeepSeek's mscale(s, mscale_all_dim)^2" in r.message for r in failed)


NO_TEMPERATURE = '''
import torch
from ropespec.implementations.adapters import hf_attention


def make(expect):
    """transformers' Ministral 3 attention with its query temperature left out: llama_4_scaling_beta read as 0, as a
    reader that drops the key computes it."""
    return hf_attention.ministral3(expect.replace(query_temperature_beta=0.0))
'''


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_ministral3_attention_with_its_query_temperature_passes(dtype):
    """transformers' Ministral 3 attention (its rotary, apply function, get_llama_4_attn_scale after RoPE, eager
    attention) holds every attention invariant under the ministral-3 preset, four heads over two: the query temperature
    is checked across its steps and shift-invariance within them."""
    from ropespec import check

    result = check("ropespec.implementations.adapters.hf_attention:ministral3",
                   expect=dict(MINISTRAL, n_heads=4, n_kv_heads=2), family="attention", array="torch", dtype=dtype,
                   seed=0)
    statuses = {r.invariant: r.status for r in result.reports[0].results if r.applicable}
    assert statuses.get("attention.query-temperature") == "pass", statuses
    assert len(statuses) >= 6 and set(statuses.values()) == {"pass"}, statuses


def test_ministral3_attention_without_its_query_temperature_is_named(tmp_path):
    from ropespec import check

    (tmp_path / "no_temperature.py").write_text(NO_TEMPERATURE)
    result = check(f"{tmp_path / 'no_temperature.py'}:make", expect=dict(MINISTRAL, n_heads=2, n_kv_heads=1),
                   family="attention", array="torch", seed=0)
    failed = [r for r in result.reports[0].results if r.status == "fail"]
    assert any(r.invariant == "attention.query-temperature" for r in failed), [(r.invariant, r.status) for r in failed]
    assert {r.diagnosis for r in failed} == {"query-temperature"}, [(r.invariant, r.diagnosis) for r in failed]
    assert all("no query temperature at all" in r.message for r in failed)


#: the ministral-3 preset at a small head (the temperature and the YaRN table are the preset's)
MINISTRAL = {"head_dim": 32, "rope_theta": 1e6, "max_position": 262144, "query_temperature_beta": 0.1,
             "query_temperature_length": 16384, "rope_scaling": {
                 "rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 16384, "beta_fast": 32.0,
                 "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0}, "yarn_softmax_mscale": False}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_llama4_nope_layer_with_its_query_temperature_passes(dtype):
    """transformers' Llama 4 text attention on a NoPE layer (Llama4TextAttention.forward: no RoPE, its
    attn_temperature_tuning of log1p(floor((p + 1) / floor_scale)) attn_scale + 1, eager attention) holds every attention
    invariant under llama-4-scout-nope, four heads over two; an expectation with RoPE is declined, not failed."""
    from ropespec import check
    from ropespec.implementations.adapters import hf_attention
    from ropespec.spec import presets

    nope = dict(presets.get("llama-4-scout-nope").to_dict(), n_heads=4, n_kv_heads=2)
    result = check("ropespec.implementations.adapters.hf_attention:llama4", expect=nope, family="attention",
                   array="torch", dtype=dtype, seed=0)
    statuses = {r.invariant: r.status for r in result.reports[0].results if r.applicable}
    assert statuses.get("attention.query-temperature") == "pass", statuses
    assert len(statuses) >= 6 and set(statuses.values()) == {"pass"}, statuses
    with pytest.raises(NotImplementedError, match="NoPE layers"):
        hf_attention.llama4(Expect.from_dict(dict(nope, attention_nope=False)))
