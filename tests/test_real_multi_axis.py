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


#: Qwen2.5-Omni's thinker as its config.json reads (rope of its text model, clock position_id_per_seconds 25, and the
#: framing its get_rope_index relies on: one token before and one after every vision block)
OMNI = {"head_dim": 128, "rope_theta": 1000000.0, "mrope_section": [16, 24, 24], "max_position": 32768,
        "video_time": "seconds", "tokens_per_second": 25, "vision_framing": [1, 1]}

OMNI_USER = '''
import torch
from transformers.models.qwen2_5_omni.configuration_qwen2_5_omni import Qwen2_5OmniThinkerConfig
from transformers.models.qwen2_5_omni.modeling_qwen2_5_omni import Qwen2_5OmniThinkerModel

TEXT, BOS = 100, 151652  # any text token; <|vision_bos|>


def make(expect):
    """Qwen2.5-Omni's get_rope_index on one sequence, the token before each block its <|vision_bos|>."""
    config = Qwen2_5OmniThinkerConfig()
    config.vision_start_token_id = BOS
    config.position_id_per_seconds = int(expect.params("position-ids").tokens_per_second)
    model = Qwen2_5OmniThinkerModel.__new__(Qwen2_5OmniThinkerModel)
    torch.nn.Module.__init__(model)
    model.config, model.spatial_merge_size, model.rope_deltas = config, 2, None

    def position_ids(segments):
        ids, images, videos, seconds = [], [], [], []
        for seg in segments:
            if seg[0] == "text":
                ids += [TEXT] * seg[1]
                continue
            t, h, w = seg[1]
            ids[-1] = BOS
            ids += [config.image_token_id if seg[0] == "image" else config.video_token_id] * (t * h * w)
            (images if seg[0] == "image" else videos).append([t, 2 * h, 2 * w])
            seconds += [seg[2]] if seg[0] == "video" else []
        ids = torch.tensor([ids])
        pos, _ = model.get_rope_index(ids, torch.tensor(images) if images else None,
                                      torch.tensor(videos) if videos else None, torch.ones_like(ids),
                                      second_per_grids=torch.tensor(seconds) if seconds else None)
        return pos[:, 0].T.numpy()

    return position_ids
'''


def test_qwen2_5_omni_from_a_scratch_folder_fails_only_where_no_prompt_frames_its_blocks(tmp_path):
    """A user's wrapper of Qwen2.5-Omni's own get_rope_index, which steps over one token after every vision block (its
    <|vision_eos|>) whatever it is: on sequences without that token (a block last; one text token between two
    blocks, both <|vision_eos|> and the next <|vision_bos|>) it raises, since it walks past the sequence or asks
    torch.arange for -1 text tokens; every failing sequence is one no Omni prompt has. Under the expectation that
    says the framing ([1, 1]) it holds every rule about a one-sequence builder."""
    pytest.importorskip("transformers")
    from ropespec import check
    from ropespec.spec import positions as rule

    (tmp_path / "omni_positions.py").write_text(OMNI_USER)
    target = f"{tmp_path / 'omni_positions.py'}:make"
    spec = importlib.util.spec_from_file_location("omni_positions", tmp_path / "omni_positions.py")
    user = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(user)
    build = user.make(Expect.from_dict(OMNI))
    two = [("text", 1), ("image", (1, 1, 1)), ("text", 1), ("image", (1, 1, 1))]
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):  # torch.arange(-1)
        build(two)
    assert build(rule.framed(two, (1, 1))).tolist() == [[0] * 3, [1] * 3, [2] * 3, [3] * 3, [4] * 3, [5] * 3]
    unframed = check(target, {k: v for k, v in OMNI.items() if k != "vision_framing"}, family="position-ids", seed=0,
                     profile="ci")
    failed = [r for r in unframed.results if r.status == "fail"]
    assert failed and {r.diagnosis for r in failed} == {"exception"}, [(r.invariant, r.message) for r in failed]
    for r in failed:
        seq = [(s[0], s[1]) if s[0] == "text" else (s[0], tuple(s[1]), *s[2:]) for s in r.counterexample["segments"]]
        assert rule.framed(seq, (1, 1)) != seq, seq
    framed = check(target, OMNI, family="position-ids", seed=0, profile="ci")
    verdicts = {r.invariant: r.status for r in framed.results if r.invariant.startswith("position-ids.")}
    assert verdicts == {**{f"position-ids.{k}": "pass" for k in ("text", "grid", "time", "resume")},
                        "position-ids.batch": "skip", "position-ids.decode": "skip"}, framed.report()


def test_transformers_qwen2_5_omni_builder_under_its_framing():
    """hf_positions:qwen2_5_omni, transformers' Qwen2.5-Omni thinker as it is (5.25), batched, under its framing: the
    prefill holds every rule; decoding after a one-token row of a left-padded text-only batch goes on one position
    late (its text-only branch fills the pads with 1 before taking the batch's largest position for rope_deltas), a
    flaw of its own; an expectation that does not frame the blocks is declined, naming the field."""
    pytest.importorskip("transformers")
    from ropespec.implementations.adapters import hf_positions
    from ropespec.implementations.shape import CallShape

    make = hf_positions.qwen2_5_omni
    with pytest.raises(NotImplementedError, match=r"vision_framing of at least \[1, 1\]"):
        make(Expect.from_dict({k: v for k, v in OMNI.items() if k != "vision_framing"}))
    _, nxt = make(Expect.from_dict(OMNI))([[("pad", 1), ("text", 1)], [("text", 2)]])
    assert nxt.tolist() == [[2, 2, 2], [2, 2, 2]]  # row 0's largest position is 0: it should go on at 1
    [impl] = load_implementations(["ropespec.implementations.adapters.hf_positions:qwen2_5_omni"],
                                  expect=Expect.from_dict(OMNI), shape=CallShape(family="position-ids"))
    try:
        results = [run_property(p, impl, profile="ci", seed_value=0) for p in PROPERTIES
                   if p.invariant.startswith("position-ids.")]
    finally:
        impl.close()
    bad = {r.invariant: r for r in results if r.status != "pass"}
    assert set(bad) <= {"position-ids.decode"}, [(r.invariant, r.status, r.message) for r in bad.values()]
    for r in bad.values():  # the cause the measurement tells apart: behind more pads it still goes on at 2
        assert r.diagnosis == "decode-restart" and "(1 tokens, largest position 0)" in r.message, r.message
        assert "one past the right position (behind 4 pads it decodes on at [2, 2, 2]" in r.message, r.message
        assert "padded length" not in r.message, r.message


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
