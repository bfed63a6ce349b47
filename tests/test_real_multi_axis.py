"""transformers' and diffusers' multi-axis rotary code, checked as a user would check it (skipped without the
``hf`` and ``diffusers`` extras; CI installs them): each model's rotary embedding and apply function
(``ropespec.implementations.adapters.hf_axes``, ``ropespec.implementations.adapters.diffusers``) under its preset holds every
invariant that is about it, in float32 and bfloat16, with position vectors of unequal axes: a preset is checked against
the real code it names."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")

from ropespec.implementations.adapters import hf_axes  # noqa: E402
from ropespec.properties.framework import all_properties, run_property  # noqa: E402
from ropespec.inputs import load_implementations  # noqa: E402
from ropespec.spec import Expect, presets  # noqa: E402

PROPERTIES = all_properties()
#: adapter -> (the library it needs, the preset it is checked under): every hf_axes adapter under the preset it names
#: (hf_axes.CHECKED_UNDER, which the transformers sweep reads too), and diffusers' code
MODELS = {
    **{f"hf_axes:{name}": ("transformers", preset) for name, (_, preset) in hf_axes.CHECKED_UNDER.items()
       if name != "hunyuan_vl"},  # HunyuanOCR's fails, a flaw of transformers': its own test below
    # ascending ladders dealt per frequency, coordinates (i - base/2) pi/base, at a dim that is a multiple of 6
    "diffusers:ltx_video": ("diffusers", "examples/ltx_video_48.json"),
    "diffusers:flux": ("diffusers", "flux.1-dev"),
    "diffusers:wan": ("diffusers", "wan2.1"),
}


def _expect(name: str):
    """A preset, or an expectation file of the examples (an expectation no model's preset states)."""
    if name.endswith(".json"):
        return Expect.from_json((Path(__file__).resolve().parents[1] / name).read_text())
    return presets.get(name)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("adapter", list(MODELS))
def test_real_multi_axis_code_holds_every_invariant(adapter, dtype):
    library, preset = MODELS[adapter]
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed")
    [impl] = load_implementations([f"ropespec.implementations.adapters.{adapter}"], expect=_expect(preset), array="torch",
                                  dtype=dtype)
    try:
        results = [run_property(p, impl, profile="ci", seed_value=0) for p in PROPERTIES]
    finally:
        impl.close()
    ran = [r for r in results if r.applicable and r.status != "skip"]
    assert {r.invariant for r in ran} >= {"rope.conformance", "rope.relative-position", "axes.separation"}
    bad = [(r.invariant, r.status, r.diagnosis, r.message[-200:]) for r in ran if r.status not in ("pass", "xfail")]
    assert not bad, bad
    if _expect(preset).axes_kind() == "per-axis":  # the documented non-invariant shows on the real code
        assert any(r.invariant == "axes.equal-axes-differ" and r.status == "xfail" for r in ran)


@pytest.mark.parametrize("target, preset, dtype", [
    ("qwen2_vl_table", "qwen2-vl-7b", "float32"), ("qwen3_vl_table", "qwen3-vl-8b", "bfloat16"),
    ("glm4v_table", "glm-4.1v", "bfloat16"), ("pixtral_table", "pixtral-12b", "float32")])
def test_real_multi_axis_rotary_embedding_as_a_table_passes(target, preset, dtype):
    """--form table on the models' own rotary embeddings: position_ids (3, batch, seq) (or (n, 2)) in, the merged
    per-dim table out (GLM-4.1V's interleaved over half its dims), in the model's dtype."""
    pytest.importorskip("transformers")
    from ropespec.implementations.shape import CallShape

    [impl] = load_implementations([f"ropespec.implementations.adapters.hf_axes:{target}"], expect=presets.get(preset),
                                  array="torch", dtype=dtype, shape=CallShape(form="table"))
    try:
        [prop] = [p for p in PROPERTIES if p.invariant == "table.angles"]
        result = run_property(prop, impl, profile="ci", seed_value=0)
    finally:
        impl.close()
    assert result.status == "pass", result.message


@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v"])
def test_transformers_position_id_builders_and_the_flaw_in_them(name):
    """README's run of transformers' position-id builders, here in the suite's own workers (one import of transformers
    serves them all): 5.24's get_rope_index of Qwen2-VL and Qwen2.5-VL resumes after a video at its start plus
    max(h, w), inside the video's own temporal positions; Qwen3-VL's and GLM-4.1V's frames of t = 1 hold every rule."""
    pytest.importorskip("transformers")
    from ropespec.implementations.shape import CallShape

    [impl] = load_implementations([f"ropespec.implementations.adapters.hf_positions:{name}"],
                                  shape=CallShape(family="position-ids"))
    try:
        results = [run_property(p, impl, profile="ci", seed_value=0) for p in PROPERTIES
                   if p.invariant.startswith("position-ids.")]
    finally:
        impl.close()
    assert len(results) == 6
    bad = {r.invariant: r for r in results if r.status != "pass"}
    if name in ("qwen3_vl", "glm4v"):
        assert bad == {}, [(r.invariant, r.status, r.message) for r in bad.values()]
        return
    assert list(bad) == ["position-ids.resume"], [(r.invariant, r.status, r.message) for r in bad.values()]
    r = bad["position-ids.resume"]
    assert r.diagnosis == "resume-offset" and "spatial extent" in r.message, r.message
    assert "the text of 3 after the video (4, 2, 2) at 1 s per step starts at 4" in r.message


COGVIDEOX = '''
import torch
from diffusers.models.embeddings import apply_rotary_emb, get_3d_rotary_pos_embed

M = 16  # frames, rows and columns of the grid: the expectation's max_position
cos, sin = get_3d_rotary_pos_embed(64, None, (M, M), M, theta=10000, grid_type="slice", max_size=(M, M))


def apply(x, positions):
    """CogVideoX's table of the whole video grid, read at row t M^2 + h M + w, applied as diffusers applies it."""
    idx = positions[:, 0] * M * M + positions[:, 1] * M + positions[:, 2]
    return apply_rotary_emb(x[None, None], (cos[idx], sin[idx]))[0, 0]
'''


def test_cogvideox_table_lookup_from_a_scratch_folder_holds_every_invariant(tmp_path):
    """A user's file around diffusers' get_3d_rotary_pos_embed and apply_rotary_emb: a table of grid rows 0 .. M - 1
    and nothing else. It failed axes.separation alone, read at row -1 (the domain rule, tests/test_domain.py)."""
    pytest.importorskip("diffusers")
    from ropespec import check

    (tmp_path / "cogvideox_rope.py").write_text(COGVIDEOX)
    result = check(f"{tmp_path / 'cogvideox_rope.py'}:apply", {"head_dim": 64, "convention": "interleaved",
                                                              "axes_dims_rope": [16, 24, 24], "max_position": 16},
                   array="torch", seed=1)
    assert result.passed, result.report()
    assert any(r.invariant == "axes.separation" and r.status == "pass" for r in result.results)


def test_ltx_video_at_its_own_inner_dim_turns_all_but_its_two_leading_dims():
    """LTX-Video's rotary over its inner dim 2048 (32 heads of 64) pads 2048 mod 6 = 2 dims ahead of the rotated
    ones: under the ltx-video preset (rotary_start 2) its code passes conformance and the pass-through property."""
    if importlib.util.find_spec("diffusers") is None:
        pytest.skip("diffusers is not installed")
    from ropespec import check

    result = check("ropespec.implementations.adapters.diffusers:ltx_video", expect="ltx-video",
                   array="torch", seed=0, invariants=["rope.conformance", "rope.partial-passthrough"])
    statuses = {(r.invariant, r.property): r.status for r in result.reports[0].results if r.applicable}
    assert statuses and set(statuses.values()) == {"pass"}, statuses


def test_hunyuan_vl_splits_its_table_by_other_sizes_than_its_pairs():
    """A genuine flaw (transformers 5.24): HunYuanVLRotaryEmbedding splits cat(freqs, freqs) by [2 s for s in
    sections] where Qwen2-VL's (and Tencent's) repeat the list, so at unequal axes pair (j, j + 64) takes its cos from
    one axis and its sin from another: no rotation (norm-per-pair fails), named not-a-rotation; text tokens, every axis
    alike, are a rotation and reduce to 1-D RoPE."""
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    from ropespec import check

    result = check("ropespec.implementations.adapters.hf_axes:hunyuan_vl", expect="hunyuanocr", array="torch", seed=0,
                   invariants=["rope.norm-per-pair", "rope.conformance", "axes.text-reduction"])
    by = {(r.invariant, r.property): r for r in result.reports[0].results if r.applicable}
    assert by[("rope.norm-per-pair", "norm_per_pair")].status == "fail"
    failed = [r for r in by.values() if r.status == "fail"]
    assert {r.diagnosis for r in failed} == {"not-a-rotation"}, [(r.property, r.diagnosis) for r in failed]
    assert "cos and sin come from different axes" in failed[0].message
    assert by[("axes.text-reduction", "text_reduction")].status == "pass"
