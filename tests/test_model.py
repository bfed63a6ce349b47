"""The model family on what it is for: the field's published plumbing bugs rebuilt as their buggy code and their fix
(tests/fixtures/plumbing: each buggy one fails with its word, each fix passes); transformers' own models built tiny
from their config classes (Llama, Qwen2-VL's text path with its M-RoPE ids, Phi-3's LongRoPE); a decoder of one's
own (examples/my_decoder.py) checked from a scratch folder as its author runs it; and the run's own bounds (a model
without a cache, the fresh models of an example let go of)."""

import json

import numpy as np
import re
import shutil
from pathlib import Path

import pytest

import ropespec

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
#: a small RoPE, the model in float64 (its logits to the float64 forward's rounding)
SMALL = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}
#: Phi-3's LongRoPE with its original length shortened to 24, so that a decode crosses it in a few steps
LONGROPE = {"head_dim": 16, "max_position": 96, "dtype": "float64", "rope_scaling": {
    "rope_type": "longrope", "original_max_position_embeddings": 24, "factor": 4.0,
    "short_factor": [1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.35],
    "long_factor": [1.0, 2.5, 4.0, 5.5, 7.0, 8.5, 10.0, 11.5]}}

#: Qwen2-VL's M-RoPE, small: t, h, w sections of 2, 3 and 3 pairs
MROPE = {"head_dim": 16, "max_position": 4096, "dtype": "float64", "mrope_section": [2, 3, 3]}

#: a partial-rotary RoPE: 8 of 16 dims turn (Phi-2's 32 of 80, small)
PARTIAL = {"head_dim": 16, "rotary_dim": 8, "max_position": 4096, "dtype": "float64"}

#: fixture module -> (its expectation, {invariant: (word, what the failure says)}) of its buggy one
BUGS = {
    "fla_902": (SMALL, {
        "model.positions": ("padding-shift", "row 1's real tokens were turned at positions [-3, -2] where [0, 1] are "
                                             "due: 3 less, its left padding subtracted"),
        "model.canonical": ("padding-shift", "with its positions inferred: row 1's real tokens were turned at "
                                             "positions [-3, -2]")}),
    "mlx_vlm_1741": (SMALL, {
        "model.positions": ("cache-offset", "chunk 2 (tokens 2 to 3) of a prefill in chunks of 2: row 0's real "
                                            "tokens were turned at positions [0, 1] where [2, 3] are due: from 0, the "
                                            "2 cached tokens' offset not added")}),
    "mlx_vlm_1993": (SMALL, {
        "model.positions": ("cache-offset", "decoding step 1: row 0's real tokens were turned at positions [0] where "
                                            "[5] are due: from 0, the 5 cached tokens' offset not added"),
        "model.cache": ("cache-offset", "their logits differ from one full forward's")}),
    "transformers_22382": (SMALL, {
        "model.positions": ("padding-shift", "the padded prefill: row 1's real tokens were turned at positions "
                                             "[3, 4] where [0, 1] are due: 3 more, its left padding counted")}),
    "unsloth_4100": (SMALL, {
        "model.positions": ("padding-shift", "the padded prefill: row 1's real tokens were turned at positions "
                                             "[3, 4] where [0, 1] are due: 3 more, its left padding counted"),
        "model.padding": ("padding-shift", "3 more, its left padding counted")}),
    "transformers_43952": (MROPE, {
        "model.stateless": ("stale-state", "a call after another (a batch of 3 rows) raised where it runs on a fresh "
                                           "model: RuntimeError: The size of tensor a (2) must match the size of "
                                           "tensor b (3)")}),
    "torchtitan_2559": (SMALL, {
        "model.packing": ("document-positions", "document 2 (tokens 4 to 6) was turned at positions [4, 5, 6] where "
                                                "[0, 1, 2] are due: it continues the positions of the documents before "
                                                "it")}),
    "transformers_32241": (SMALL, {
        "model.packing": ("taken-for-packed", "a decoding step at position 13 after 9 cached tokens: its logits "
                                              "without an attention mask differ from those with one")}),
    "transformers_44911": (MROPE, {
        "model.packing": ("taken-for-packed", "whose tokens 2 to 5 are a vision block (temporal positions [4, 5, 6, 6, "
                                              "6, 6, 8, 9, 10]): its logits without an attention mask differ")}),
    "transformers_40163": (SMALL, {
        "model.window": ("window-reach", "layer 0 (sliding, window 4) moves the outputs at [0, 1, 2, 3, 4] from "
                                         "inputs moved at [0]: its window reaches 5 keys, expected 4")}),
    "vllm_51756": (SMALL, {
        "model.window": ("window-reach", "layer 1 (full) moves the outputs at [0, 1, 2, 3, 4, 5, 6] from inputs moved "
                                         "at [0, 1, 2, 3]: a global layer reaches at most 4 keys")}),
    "llama_cpp_4889": (PARTIAL, {
        "model.shift": ("kv-shift", "a token at position 12 after 5 cached keys shifted by 7: its logits differ from "
                                    "those after keys turned at 7 ... 11 (partial rotary: 8 of 16 dims turn)")}),
    "megatron_lm_5243": (SMALL, {
        "model.shards": ("shard-positions", "2 documents of 4, 8 tokens over 2 ranks, load-balanced: rank 0 turns "
                                            "document 2's tokens [4, 5, 10, 11] at positions [0, 1, 2, 3] where [0, 1, "
                                            "6, 7] are due")}),
    "sglang_25015": (SMALL, {
        "model.drafts": ("draft-positions", "3 drafts verified in one forward after 5 tokens: row 0's tokens were "
                                            "turned at positions [6, 7, 8] where [5, 6, 7] are due: 1 past its "
                                            "tokens' own")}),
    "transformers_30068": (SMALL, {
        "model.drafts": ("draft-positions", "the step after 2 of 3 drafts were accepted (the cache cut back to 7 "
                                            "tokens): row 0's tokens were turned at positions [6] where [7] are due")}),
    "transformers_33129": (LONGROPE, {
        "model.length": ("scaling", "past the original length 24, its own config's; prefill 23): its logits differ "
                                    "from one full forward of the sequence up to it by")}),
}
#: the fixtures built on transformers' models (the slow tier: conftest.py's SLOW)
ON_TRANSFORMERS = ("unsloth_4100", "transformers_33129", "transformers_43952")


def _check(checked, monkeypatch, target: str, expect: dict, **options):
    monkeypatch.syspath_prepend(str(FIXTURES))
    return checked(target, json.dumps(expect), family="model", seed=0, **options)


def _model_results(report) -> dict:
    return {r.invariant: r for r in report.results if r.invariant.startswith("model.")}


def _holds(report) -> None:
    results = _model_results(report)
    assert all(r.status in ("pass", "skip") for r in results.values()), \
        {k: (r.status, r.message) for k, r in results.items() if r.status not in ("pass", "skip")}
    skipped = {k: r.message for k, r in results.items() if r.status == "skip"}
    # only where its RoPE does not depend on the length (or, for an offset, where it does), or where the model lacks
    # the door (a transformers model has no context shift and no shard builder; a decoder of its own may take no
    # documents and say no windows)
    assert set(skipped) <= {"model.length", "model.shift", "model.offset", "model.shards", "model.packing",
                            "model.window", "model.drafts"}, skipped
    doors = ("of its own", "takes no documents", "says no windows", "changes its table with the sequence's length",
             "turns its tokens at its own positions")
    assert all(any(d in m for d in doors) for k, m in skipped.items() if k != "model.length"), skipped
    assert sum(r.status == "pass" for r in results.values()) >= 5


def _fails_with_its_words(report, wanted: dict) -> None:
    results = _model_results(report)
    for invariant, (word, said) in wanted.items():
        r = results[invariant]
        assert (r.status, r.diagnosis) == ("fail", word), (invariant, r.status, r.diagnosis, r.message)
        assert said in r.message, (invariant, r.message)


def _bugs(on_transformers: bool):
    names = [n for n in BUGS if (n in ON_TRANSFORMERS) == on_transformers]
    return pytest.mark.parametrize("name", names)


@_bugs(on_transformers=False)
def test_a_published_bug_fails_with_its_word_and_its_fix_passes(name, checked, monkeypatch):
    expect, wanted = BUGS[name]
    _fails_with_its_words(_check(checked, monkeypatch, f"plumbing.{name}:buggy", expect), wanted)
    _holds(_check(checked, monkeypatch, f"plumbing.{name}:fixed", expect))


@_bugs(on_transformers=True)
def test_a_published_bug_on_transformers_fails_with_its_word_and_its_fix_passes(name, checked, monkeypatch):
    pytest.importorskip("transformers")
    expect, wanted = BUGS[name]
    _fails_with_its_words(_check(checked, monkeypatch, f"plumbing.{name}:buggy", expect), wanted)
    _holds(_check(checked, monkeypatch, f"plumbing.{name}:fixed", expect))


def test_the_record_spans_the_published_bugs_of_nine_projects():
    projects = {name.rpartition("_")[0] for name in BUGS}
    assert len(BUGS) >= 16 and projects == {"fla", "mlx_vlm", "transformers", "unsloth", "torchtitan", "vllm",
                                            "llama_cpp", "megatron_lm", "sglang"}
    assert sorted(p.stem for p in (FIXTURES / "plumbing").glob("[a-z]*.py")) == sorted(BUGS)


@pytest.mark.parametrize("model_type, expect", [
    ("llama", "llama3.1-8b"),  # llama3 scaling, head_dim 128
    ("qwen2_vl", "qwen2-vl-7b"),  # M-RoPE, sections [16, 24, 24]: the text path's 3-row ids
    ("phi3", str(FIXTURES / "configs" / "phi-3-mini-128k.json")),  # LongRoPE, its original length 4096
])
def test_transformers_models_built_tiny_from_their_config_classes_hold(model_type, expect, checked):
    pytest.importorskip("transformers")
    report = checked(f"ropespec.implementations.adapters.hf_model:{model_type}", expect, dtype="float64",
                     family="model", seed=0)
    _holds(report)
    if model_type == "phi3":
        assert _model_results(report)["model.length"].status == "pass"


def _scratch(tmp_path, text: str | None = None) -> Path:
    """A folder of the user's own with their decoder in it (examples/my_decoder.py, or ``text``)."""
    shutil.copy(ROOT / "examples" / "my_decoder.py", tmp_path / "my_decoder.py")
    if text is not None:
        (tmp_path / "my_decoder.py").write_text(text)
    return tmp_path


def _mutated(old: str, new: str) -> str:
    text = (ROOT / "examples" / "my_decoder.py").read_text()
    assert text.count(old) == 1
    return text.replace(old, new)


def test_a_decoder_of_ones_own_is_checked_from_a_scratch_folder(tmp_path, ropespec_process):
    pytest.importorskip("torch")
    folder = _scratch(tmp_path)
    out = ropespec_process("check", "my_decoder.py:make", "--family", "model", "--expect", json.dumps(SMALL), cwd=folder)
    assert out.returncode == 0, out.stdout + out.stderr
    for invariant in ("model.positions", "model.padding", "model.cache", "model.canonical", "model.stateless",
                      "model.packing", "model.window", "model.drafts"):
        assert f"my_decoder.py:make  {invariant}" in out.stdout and "9 passed, 0 failed" in out.stdout, out.stdout


@pytest.mark.parametrize("old, new, word, said", [
    # its positions counted from the row's first column, pads included (transformers #22161)
    ("positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, past:]",
     "positions = torch.arange(past, mask.shape[1]).expand(len(ids), -1)",
     "padding-shift", "3 more, its left padding counted"),
    # the new tokens' positions sliced from the sequence's start, not the cache's end (mlx-vlm #1983)
    ("[:, past:]", "[:, :ids.shape[1]]", "cache-offset", "cached tokens' offset not added"),
])
def test_a_decoder_of_ones_own_with_a_plumbing_bug_is_named(tmp_path, ropespec_process, old, new, word, said):
    pytest.importorskip("torch")
    folder = _scratch(tmp_path, _mutated(old, new))
    out = ropespec_process("check", "my_decoder.py:make", "--family", "model", "--expect", json.dumps(SMALL),
                           "--invariant", "model.positions", "--seed", "0", cwd=folder)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"[{word}]" in out.stdout and said in out.stdout, out.stdout
    replay = next(line for line in out.stdout.splitlines() if line.strip().startswith("replay: "))
    assert "my_decoder.py:make" in replay and "--family model" in replay


class _NoCache:
    """A decoder that keeps no cache: forward returns (logits, None)."""

    def __init__(self, expect):
        from ropespec.implementations.numpy_model import Decoder

        self.inner = Decoder(expect)
        self.rope_positions = []

    def forward(self, ids, positions=None, mask=None, cache=None):
        logits, _ = self.inner.forward(ids, positions, mask, None)
        self.rope_positions = self.inner.rope_positions
        return logits, None


def test_a_model_without_a_cache_has_what_needs_one_skipped_and_the_rest_checked():
    report = ropespec.check(_NoCache, json.dumps(SMALL), family="model", seed=0)
    results = _model_results(report)
    assert results["model.cache"].status == "skip"
    assert "the model returned no cache from its forward: a forward in chunks needs one" in results["model.cache"].message
    assert results["model.positions"].status == "pass"
    assert "the prefill only: the model returned no cache" in results["model.positions"].message
    assert results["model.canonical"].status == results["model.stateless"].status == "pass"


class _SliceLonger:
    """A decoder that slices each forward's positions CHUNK long from the sequence's, whatever the forward's length: a
    forward of fewer tokens hands its RoPE more positions than it turns, and the RoPE call raises."""

    CHUNK = 4

    def __init__(self, expect):
        from ropespec.implementations.numpy_model import Decoder

        self.inner = Decoder(expect)
        self.rope_positions = []

    def forward(self, ids, positions=None, mask=None, cache=None):
        ids = np.asarray(ids)
        past = cache["length"] if cache else 0
        mask = np.ones((len(ids), past + ids.shape[1]), dtype=np.int64) if mask is None else np.asarray(mask)
        if positions is None:
            ahead = self.inner.inferred(np.concatenate([mask, np.ones((len(ids), self.CHUNK), np.int64)], axis=1))
            positions = ahead[:, past:past + max(self.CHUNK, ids.shape[1])]
        self.rope_positions = [positions]
        return self.inner.forward(ids, positions, mask, cache)


def test_a_forward_that_raises_is_named_by_the_positions_it_handed_its_rope():
    """A slice of positions longer than its forward's tokens makes the RoPE call raise: the positions it handed are
    read and named (their count, for the tokens it turns), in every invariant that meets it, never a bare exception."""
    report = ropespec.check(_SliceLonger, json.dumps(SMALL), family="model", seed=0)
    failed = {k: r for k, r in _model_results(report).items() if r.status == "fail"}
    assert {"model.positions", "model.padding", "model.cache", "model.canonical"} <= set(failed), failed
    for invariant, r in failed.items():
        assert r.diagnosis == "shape" and "4 positions" in r.message and "longer than the tokens it turns" in \
            r.message, (invariant, r.message)


def _one_scheme(only: str):
    """A decoder whose context-parallel builder takes one scheme and raises NotImplementedError for the other."""
    from ropespec.implementations.numpy_model import Decoder

    class OneScheme(Decoder):
        def shard_positions(self, lengths, cp_size, rank, scheme):
            if scheme != only:
                raise NotImplementedError(f"{only} only")
            return super().shard_positions(lengths, cp_size, rank, scheme)

    return OneScheme


@pytest.mark.parametrize("only", ["load-balanced", "contiguous"])
def test_a_door_that_raises_not_implemented_for_one_input_declines_that_case_only(only):
    """A door's NotImplementedError declines the one input it was handed (a shard builder of one scheme): the other
    scheme's cases are checked and the row says some were not asked, never an exception of the model's."""
    report = ropespec.check(_one_scheme(only), json.dumps(SMALL), family="model", invariants=["model.shards"], seed=0)
    r = _model_results(report)["model.shards"]
    assert r.status == "pass" and r.examples > 1, (r.status, r.message)
    assert f"declines it: {only} only" in r.message, r.message


class _CacheNowAndThen:
    """A decoder that returns its cache from a prompt at position 0 and none from one given other positions, and counts
    no cache when none is handed back to it."""

    def __init__(self, expect):
        from ropespec.implementations.numpy_model import Decoder

        self.inner = Decoder(expect)
        self.rope_positions = []

    def forward(self, ids, positions=None, mask=None, cache=None):
        if cache is None and mask is not None and mask.shape[1] > np.shape(ids)[1]:
            mask = mask[:, -np.shape(ids)[1]:]  # no cache handed back: the tokens alone
        logits, kept = self.inner.forward(ids, positions, mask, cache)
        self.rope_positions = self.inner.rope_positions
        from_zero = positions is None or int(np.asarray(positions).flat[0]) == 0
        return logits, kept if from_zero else None


def test_a_model_that_returns_a_cache_now_and_then_gets_verdicts_not_errors():
    """A cache from some calls and none from others: every invariant says a verdict (a comparison of what both calls
    have, and what was not compared), never a crash of ropespec's own (model.offset broadcast (1, 5, V) with (1, 6,
    V))."""
    report = ropespec.check(_CacheNowAndThen, json.dumps(SMALL), family="model", seed=0)
    results = _model_results(report)
    assert not [k for k, r in results.items() if r.status == "error"], {k: r.message for k, r in results.items()}
    assert results["model.offset"].status == "pass", results["model.offset"].message


def _phi3_of_its_own(reprefill: bool):
    """A factory that hands over a tiny Phi-3 of its own LongRoPE, original_max_position_embeddings 16, whatever the
    expectation says; without ``reprefill``, its cache is kept across the switch (transformers #33129)."""
    from ropespec.implementations.zoo.model import longrope_no_reprefill as stale

    own = dict(stale.EXPECT, rope_scaling=dict(stale.EXPECT["rope_scaling"], original_max_position_embeddings=16))

    def make(expect):
        from ropespec.implementations.adapters import hf_model
        from ropespec.spec.expectation import Expect

        e = Expect.from_dict(own)
        return hf_model.phi3(e) if reprefill else stale.make(e)

    return make


@pytest.mark.parametrize("reprefill", [False, True])
def test_a_handed_over_model_is_decoded_across_its_own_switch(reprefill):
    """model.length decodes across the original length the model's own config says: a Phi-3 handed over with its own
    16, checked under an expectation that says 24, switched before the prefill ended and nothing was crossed."""
    pytest.importorskip("transformers")
    from ropespec.implementations.zoo.model import longrope_no_reprefill as stale

    report = ropespec.check(_phi3_of_its_own(reprefill), json.dumps(stale.EXPECT), family="model",
                            invariants=["model.length"], array="torch", seed=0)
    r = _model_results(report)["model.length"]
    if reprefill:
        assert r.status == "pass", r.message
    else:
        assert (r.status, r.diagnosis) == ("fail", "scaling"), r.message
        assert "the original length 16, its own config's" in r.message, r.message


def _speculative(advanced_by_one: bool):
    """A decoder whose assisted generation drafts 3 tokens a round with its draft model and verifies them in one
    forward at positions from its own counter; ``advanced_by_one``: the counter advanced by one a round instead of by
    the accepted drafts and one."""
    from ropespec.implementations.numpy_model import Decoder

    class Speculative(Decoder):
        DRAFTS = 3

        def generate(self, ids, mask=None, steps=2, copies=1, draft=None):
            if draft is None:
                return super().generate(ids, mask, steps, copies)
            seq = [int(i) for i in np.asarray(ids)[0]]
            logits, cache = self.forward(np.array([seq]))
            out, at = [int(logits[0, -1].argmax())], len(seq)  # at: the position of the next token fed
            while len(out) < steps:
                proposal = [int(t) for t in draft.generate(np.array([seq + out]), steps=self.DRAFTS)[0]]
                feed = [out[-1]] + proposal
                logits, cache = self.forward(np.array([feed]), positions=np.arange(at, at + len(feed))[None],
                                             mask=np.ones((1, cache["length"] + len(feed)), dtype=np.int64),
                                             cache=cache)
                predicted = [int(t) for t in logits[0].argmax(axis=-1)]
                j = next((i for i in range(self.DRAFTS) if predicted[i] != proposal[i]), self.DRAFTS)
                out += proposal[:j] + [predicted[j]]
                cache = self.crop(cache, cache["length"] - self.DRAFTS + j)
                at += 1 if advanced_by_one else 1 + j
            return np.array([out[:steps]])

    return Speculative


@pytest.mark.parametrize("advanced_by_one", [True, False])
def test_assisted_generation_is_verified_over_two_rounds_at_least(advanced_by_one):
    """With 3 drafts all accepted, one verification round yields 4 tokens: a counter advanced by one instead of by the
    accepted drafts shows only in the round after, so assisted generation is asked for steps enough for two rounds,
    and with a draft always accepted each forward starts where the one before it ended."""
    report = ropespec.check(_speculative(advanced_by_one), json.dumps(SMALL), family="model",
                            invariants=["model.drafts"], seed=0)
    r = _model_results(report)["model.drafts"]
    if advanced_by_one:
        assert (r.status, r.diagnosis) == ("fail", "draft-positions"), r.message
        assert "the accepted drafts not counted" in r.message, r.message
    else:
        assert r.status == "pass" and "verification round" not in r.message, r.message


def test_the_fresh_models_of_an_example_are_let_go_of():
    """A property builds a fresh model per example (and several in one); each is let go of when its example ends, so
    that a run holds a few models, not one per example (a transformers model's weights are tens of MB)."""
    from ropespec.implementations import load_implementation
    from ropespec.implementations.shape import CallShape
    from ropespec.properties import test_model as model
    from ropespec.properties.framework import run_property
    from ropespec.spec.expectation import Expect

    built = []

    def make(expect):
        from ropespec.implementations.numpy_model import Decoder

        built.append(Decoder(expect))
        return built[-1]

    impl = load_implementation(make, expect=Expect.from_dict(SMALL), isolate=False, shape=CallShape(family="model"))
    result = run_property(model.test_model_padding.property, impl, profile="dev", seed_value=0)
    assert result.status == "pass" and len(built) > 20
    assert len(impl.host.host.fns) <= 1, len(impl.host.host.fns)  # the bound one of bind(), no fresh one


class _NoRope:
    """A decoder whose forward hands no positions to a RoPE (it has none): rope_positions stays empty."""

    def __init__(self, expect):
        self.rope_positions = []

    def forward(self, ids, positions=None, mask=None, cache=None):
        import numpy as np

        self.rope_positions = []
        return np.zeros(np.shape(ids) + (8,)), None


def test_a_model_without_rope_is_nothing_checked_with_the_reason():
    """Nothing of the model family applies to a model that hands no positions to a RoPE: its warm-up says so, the
    implementation is skipped with that reason (exit 2, nothing checked), never a failure or an error of ropespec's."""
    report = ropespec.check(_NoRope, json.dumps(SMALL), family="model", seed=0)
    [rep] = report.unchecked
    assert not report.passed and "handed no positions to a RoPE" in rep.impl.skip_reason, rep.impl.skip_reason
    assert all(r.status == "skip" for r in rep.results)


def test_a_model_type_transformers_lacks_is_one_line_and_exit_2(cli):
    """A model type the installed transformers does not build (its code is a hub repository's: remote code) is one
    line naming it, exit 2: never transformers' list of every model type."""
    pytest.importorskip("transformers")
    ran = cli("check", "ropespec.implementations.adapters.hf_model:not_a_type", "--family", "model", "--expect",
              json.dumps(SMALL))
    code, _, err = ran
    assert code == 2
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert "has no causal LM of model type 'not_a_type'" in line and "remote code" in line and len(line) < 400, line


# -- a config.json as the target -------------------------------------------------------------------------------------
CONFIGS = FIXTURES / "configs"


@pytest.mark.parametrize("name, layer_types", [
    ("gemma-3-4b.json", ["sliding_attention", "full_attention"]),  # one layer of each type, its window kept
    ("deepseek-v3.json", None),  # MLA: its RoPE slice of q and k the expectation's head
    ("qwen2.5-vl-7b.json", ["full_attention", "full_attention"]),  # its vision tower tiny, never used
    ("glm-4.1v.json", None),  # no vision_config of its own: the class's default tower, made tiny
    ("gpt-j-6b.json", None),  # n_embd, n_layer: the config's own names for its sizes
])
def test_a_config_json_builds_a_tiny_model_of_its_own_class_keeping_its_fields(name, layer_types):
    """Every field of the config kept but its sizes: its class, its RoPE as written, its sliding window, one layer of
    each of its layer types; random weights in float64, small enough for a battery in seconds."""
    pytest.importorskip("transformers")
    from ropespec.implementations.adapters import hf_model
    from ropespec.spec.hfconfig import read

    import transformers

    d = json.loads((CONFIGS / name).read_text())
    model = hf_model.config_file(str(CONFIGS / name))(read(CONFIGS / name).replace(dtype="float64"))
    text = model.config.get_text_config()
    full = transformers.AutoConfig.for_model(d["model_type"], **{k: v for k, v in d.items() if k != "model_type"})
    full_text = full.get_text_config()
    assert type(model.config) is type(full) or type(text) is type(full_text)  # the config's own class
    for key in ("rope_parameters", "rotary_dim", "rotary_pct"):  # its RoPE as transformers reads the config
        assert getattr(text, key, None) == getattr(full_text, key, None), key
    full_window = getattr(full_text, "sliding_window", None)  # shrunk to a few keys: a row of three windows is short
    assert getattr(text, "sliding_window", None) == (min(full_window, hf_model.TINY_WINDOW) if full_window else full_window)
    assert getattr(text, "layer_types", None) == layer_types
    assert set(layer_types or []) == set(getattr(full_text, "layer_types", None) or [])  # every type, once or twice
    assert str(next(model.parameters()).dtype) == "torch.float64"
    assert sum(p.numel() for p in model.parameters()) < 30_000_000, "not tiny"
    assert text.num_hidden_layers <= 2 and text.vocab_size == 128


def test_a_config_json_target_is_checked_whole_from_the_command_line(tmp_path, cli):
    """`ropespec check config.json --family model`: its own RoPE as the expectation, float64, every model invariant."""
    pytest.importorskip("transformers")
    shutil.copy(CONFIGS / "phi-3-mini-128k.json", tmp_path / "config.json")
    code, out, err = cli("check", "config.json", "--family", "model", "--seed", "1", cwd=tmp_path)
    assert code == 0, out[-2000:] + err[-2000:]
    assert "a model whose RoPE is head_dim 96, theta 10000, half, longrope scaling, float64" in out
    # a context shift and shards: transformers has neither; no offset: LongRoPE's table changes with the length
    assert "9 passed, 0 failed, 3 skipped" in out


def test_a_config_json_that_needs_remote_code_or_a_hybrid_is_one_line_and_exit_2(tmp_path, cli):
    pytest.importorskip("transformers")
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "my_secret_lm", "auto_map": {"AutoConfig": "configuration_x.XConfig"}, "hidden_size": 64,
        "num_attention_heads": 4, "rope_theta": 10000, "max_position_embeddings": 4096}))
    code, _, err = cli("check", "config.json", "--family", "model", cwd=tmp_path)
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and "model_type 'my_secret_lm' is not a model of transformers" in line and "remote code" in line
    # a hybrid's recurrent layers run in float32 in transformers' reference kernels: not judged by a float64 bound
    code, _, err = cli("check", str(CONFIGS / "qwen3.5.json"), "--family", "model", cwd=tmp_path)
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and "Qwen3_5GatedDeltaNet layers (a recurrent state) are computed in float32" in line, line


@pytest.mark.parametrize("argv, said", [
    (["config.json"], "TARGET config.json: a config.json is checked as a whole model, a tiny one of its own class: "
                      "add --family model"),
    (["missing.json", "--family", "model"], "TARGET missing.json: no such file"),
])
def test_a_config_json_target_misused_is_one_line_and_exit_2(tmp_path, cli, argv, said):
    shutil.copy(CONFIGS / "phi-3-mini-128k.json", tmp_path / "config.json")
    code, out, err = cli("check", *argv, cwd=tmp_path)
    assert code == 2 and err.strip() == f"ropespec: error: {said}" and not out


def test_a_decoder_of_ones_own_through_the_pytest_plugin(tmp_path):
    """The plugin's doors on a whole model, in a scratch project: the properties under --rope-family model, and the
    rope_check fixture failing a test with the fault's word."""
    import subprocess
    import sys

    shutil.copy(ROOT / "examples" / "my_decoder.py", tmp_path / "my_decoder.py")
    (tmp_path / "test_mine.py").write_text(
        "import torch\n"
        "from my_decoder import Decoder, make\n\n\n"
        "class Shifted(Decoder):  # positions from the row's first column, its pads counted\n"
        "    def forward(self, ids, positions=None, mask=None, cache=None):\n"
        "        past = 0 if cache is None else cache[0][0].shape[2]\n"
        "        if positions is None:\n"
        "            positions = torch.arange(past, past + len(ids[0])).expand(len(ids), -1)\n"
        "        return super().forward(ids, positions, mask, cache)\n\n\n"
        "def shifted(expect):\n"
        "    return Shifted(expect.head_dim, expect.rope_theta)\n\n\n"
        "def test_mine(rope_check):\n"
        "    rope_check(make, expect={'head_dim': 16, 'dtype': 'float64'}, family='model')\n\n\n"
        "def test_shifted(rope_check):\n"
        "    rope_check(shifted, expect={'head_dim': 16, 'dtype': 'float64'}, family='model')\n")
    run = lambda *a: subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *a],  # noqa: E731
                                    cwd=tmp_path, capture_output=True, text=True, timeout=600)
    ran = run("test_mine.py")
    assert ran.returncode == 1 and "1 failed, 1 passed" in ran.stdout, ran.stdout[-2000:]
    assert "FAILED test_mine.py::test_shifted - Failed: [padding-shift]" in ran.stdout, ran.stdout[-2000:]
    ran = run("--rope-impl", "my_decoder.py:make", "--rope-family", "model", "--rope-expect",
              json.dumps({"head_dim": 16, "dtype": "float64"}), "--pyargs", "ropespec.properties")
    assert ran.returncode == 0 and re.search(r"\b9 passed", ran.stdout), ran.stdout[-2000:]


def test_a_model_type_without_sdpa_is_declined_with_the_reason(cli):
    """Gemma 2 has no sdpa attention, and its eager attention turns a float64 model's mask into NaN rows under left
    padding: ropespec's float64 build cannot judge it, and says so (exit 2), never a verdict on Gemma 2."""
    pytest.importorskip("transformers")
    code, _, err = cli("check", "ropespec.implementations.adapters.hf_model:gemma2", "--family", "model", "--expect",
                       json.dumps(SMALL))
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and "Gemma2ForCausalLM has no sdpa attention" in line, line


def test_a_tiny_model_that_does_not_run_is_said_never_judged(cli):
    """Qwen2-VL built for an expectation without M-RoPE sections keeps its default sections, [16, 24, 24], which a head
    of 16 cannot split: the model ropespec built cannot run, which is ropespec's to say (exit 2), never a verdict."""
    pytest.importorskip("transformers")
    code, _, err = cli("check", "ropespec.implementations.adapters.hf_model:qwen2_vl", "--family", "model", "--expect",
                       json.dumps(SMALL))
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and "does not run a forward in float64 with sdpa attention (RuntimeError: split_with_sizes" \
        in line, line


def test_a_mixture_of_experts_runs_in_float64():
    """Mixtral's experts, run by the eager loop (grouped_mm takes no float64): the tiny model builds and runs."""
    pytest.importorskip("transformers")
    from ropespec.implementations.adapters import hf_model
    from ropespec.spec.expectation import Expect

    model = hf_model.mixtral(Expect.from_dict(SMALL))
    assert model.config.get_text_config()._experts_implementation == "eager"


def test_a_float32_transcendental_of_the_activations_is_declined():
    """MiniMax-M2's router takes the sigmoid of its float32 logits whatever the model's dtype; float32's sigmoid runs
    vectors and a scalar tail, so a token's weights round by where the tensor's length puts it, and a row alone and in
    a batch differ by float32's rounding: the builder says so (exit 2 through the CLI), never a verdict."""
    pytest.importorskip("transformers")
    from ropespec.implementations.adapters import hf_model
    from ropespec.spec.expectation import Expect

    with pytest.raises(NotImplementedError, match=r"mlp\.gate computes an element-wise transcendental \(sigmoid\) of "
                                                  r"the activations in float32"):
        hf_model.minimax_m2(Expect.from_dict(SMALL))


def test_special_token_ids_past_the_tiny_vocabulary_are_moved_into_it():
    """Gemma 4's image, video and audio token ids (258880 ...) are past the tiny vocabulary: embedding them for
    inputs_embeds raised IndexError. Each is moved to the top of the tiny vocabulary, one old id one new id, at the top
    and in each sub-config; ids inside it, and keys that are not names, stay."""
    from ropespec.implementations.adapters.hf_model import _ids_in_vocab

    fields = {"image_token_id": 258880, "video_token_index": 258884, "pad_token_id": 0, "boi_token_id": 255999,
              "text_config": {"audio_token_id": 258881, "image_token_id": 258880, "vocab_size": 128},
              "per_layer": {0: 258880}, "use_token_id": True}
    assert _ids_in_vocab(fields, 128) == {
        "image_token_id": 127, "video_token_index": 126, "pad_token_id": 0, "boi_token_id": 125,
        "text_config": {"audio_token_id": 124, "image_token_id": 127, "vocab_size": 128},
        "per_layer": {0: 258880}, "use_token_id": True}
