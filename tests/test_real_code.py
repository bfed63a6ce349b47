"""transformers' own rotary code, model type by model type, checked as a user would check it (skipped
without the ``hf`` extra; CI installs it).

Each model's rotary embedding class and apply function (``ropespec.implementations.adapters.hf``), under the
expectation its config or preset describes: the default class holds in float32 and bfloat16, and the
strict class fails at 2^24 with ``angle-precision`` and no other word (transformers forms float32
angles). The full per-class verdicts, all properties, are measured by ``benchmarks/real_code.py``
for README's table.
"""

from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from ropespec.properties.framework import all_properties, PROPERTIES, run_property  # noqa: E402
from ropespec.inputs import load_implementations  # noqa: E402
from ropespec.spec import presets  # noqa: E402
from ropespec.spec.hfconfig import from_hf_config, read  # noqa: E402

all_properties()
FIXTURES = Path(__file__).parent / "fixtures" / "configs"


def _class_config(name):
    import transformers

    cfg = getattr(transformers, name)()
    return from_hf_config({"model_type": cfg.model_type, **cfg.to_dict()})


#: model type -> how its expectation is obtained (a shipped config.json, a preset, or the config class's defaults)
MODELS = {
    "gpt_neox": lambda: read(FIXTURES / "gpt-neox-20b.json"),       # partial rotary (rotary_pct 0.25)
    "gptj": lambda: read(FIXTURES / "gpt-j-6b.json"),               # interleaved, rotary_dim 64 of 256
    "llama": lambda: presets.get("llama3.1-8b"),                     # llama3 scaling
    "mistral": lambda: _class_config("MistralConfig"),
    "qwen2": lambda: presets.get("qwen2.5-7b-yarn"),                 # yarn
    "phi3": lambda: read(FIXTURES / "phi-3-mini-128k.json"),        # longrope, original length at the top level
    "gemma3": lambda: read(FIXTURES / "gemma-3-4b.json"),           # text_config, linear scaling
    "deepseek_v3": lambda: read(FIXTURES / "deepseek-v3.json"),     # rope_interleave, yarn with mscale
    "gpt_oss": lambda: presets.get("gpt-oss"),                       # yarn without truncation
}
CORE = ("conformance", "large_positions")


def _run(model_type, expect, dtype):
    [impl] = load_implementations([f"ropespec.implementations.adapters.hf:{model_type}"], expect=expect, array="torch", dtype=dtype)
    return [run_property(PROPERTIES[p], impl, profile="dev", seed_value=0) for p in CORE]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("model_type", list(MODELS))
def test_real_code_holds_the_default_class(model_type, dtype):
    for r in _run(model_type, MODELS[model_type](), dtype):
        assert r.status == "pass", f"{model_type} {dtype} {r.property.name}: {r.status} [{r.diagnosis}] {r.message}"


@pytest.mark.parametrize("model_type", list(MODELS))
def test_real_code_fails_the_strict_class_with_angle_precision_only(model_type):
    e = MODELS[model_type]()
    # GPT-J's sin/cos table has max_position rows: it is checked where it has them
    top = e.max_position if model_type == "gptj" else max(e.max_position, 2**24)
    results = _run(model_type, e.replace(angle_dtype="exact", inv_freq_dtype="exact", max_position=top), "float32")
    assert any(r.status == "fail" for r in results), [(r.status, r.message) for r in results]
    assert {r.diagnosis for r in results if r.status == "fail"} == {"angle-precision"}, \
        [(r.diagnosis, r.message[-200:]) for r in results]


def test_deepseek_v3_checked_in_place_is_a_layout_fault_and_nothing_else(tmp_path):
    """transformers' DeepSeek-V3 code writes interleaved pairs in the half layout. Checked as in-place
    interleaved RoPE (DeepSeek's own inference code), every failure is that one cause: ``layout``. Before,
    the words were not-a-rotation, attention-factor 0.765 and scaling."""
    from ropespec import check

    (tmp_path / "ds.py").write_text(
        "from ropespec.implementations.adapters.hf import deepseek_v3\n"
        "from spec import presets\n"
        "_f = deepseek_v3(presets.get('deepseek-v3'))\n\n\n"
        "def rope(x, positions):\n    return _f(x, positions)\n")
    e = presets.get("deepseek-v3").replace(convention="interleaved")
    result = check(f"{tmp_path / 'ds.py'}:rope", expect=e, array="torch", seed=0)
    failed = [r for r in result.reports[0].results if r.status == "fail"]
    assert failed and {r.diagnosis for r in failed} == {"layout"}, [(r.property, r.diagnosis) for r in failed]
    assert "written to dims (0, 32), expected (0, 1)" in failed[0].message
