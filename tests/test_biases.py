"""The positional-bias families (ALiBi, T5's buckets): their reference against the published code, the bounds, plain
functions as users write them, and real code (transformers' BLOOM, Falcon, MPT and T5)."""

import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from ropespec.implementations import biases
from ropespec.reference.biases import alibi_slopes, t5_buckets
from ropespec import check
from ropespec.cli import main
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect, ExpectationError


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from biases import get_slopes as press_slopes  # noqa: E402  (the authors' get_slopes, as a user writes it)


@pytest.mark.parametrize("heads", [1, 2, 3, 5, 8, 12, 20, 40, 64, 112])
def test_the_slopes_are_press_et_al_s(heads):
    """The reference's correctly rounded slopes, against the authors' float64 start * start**i (within 64 ulp: its
    power of a rounded start carries up to i + 1 roundings)."""
    assert np.allclose(alibi_slopes(heads), press_slopes(heads), rtol=64 * 2.0**-52, atol=0)


def test_the_buckets_are_t5_s_own_even_where_its_log_ratio_is_a_whole_number():
    """ln 8 / ln 32 x 5 is exactly 3 (18 buckets, max_distance 128, distance 32): mpmath's last bit must not floor it
    to 2, and T5's float32 answer there is the exact one."""
    exact, _ = t5_buckets(np.array([-32, 32]), True, 18, 128)
    assert exact.tolist() == [7, 16]
    assert biases.t5_bucket(np.array([-32]), True, 18, 128).tolist() == [7]


def test_the_strict_bound_is_the_distance_s_and_the_default_adds_the_call_s_reach():
    e = Expect(dtype="bfloat16")
    strict = e.replace(angle_dtype="exact", inv_freq_dtype="exact")
    q, k = np.array([511]), np.array([509, 511])
    m = alibi_slopes(8)
    b_default, b_strict = tolerance.bias_bound(e, m, q, k), tolerance.bias_bound(strict, m, q, k)
    assert b_strict[0, 0, 1] == tolerance.atol(strict)  # the diagonal: distance 0, exact
    assert b_strict[0, 0, 0] == pytest.approx(2 * 2.0**-8 * 0.5 * 2)
    assert b_default[0, 0, 1] > 2.0**-8 * 0.5 * 511  # the rounding of slope x 511 in bfloat16


def test_an_expectation_s_bias_fields_are_validated():
    with pytest.raises(ExpectationError, match="alibi_bias_max"):
        Expect.from_dict({"alibi_bias_max": 0})
    with pytest.raises(ExpectationError, match="bias_symmetric"):
        Expect.from_dict({"bias_symmetric": "yes"})
    assert "alibi_bias_max" not in Expect().to_dict() and Expect.from_dict({"bias_symmetric": True}).to_dict()["bias_symmetric"]


def test_a_bad_bias_field_on_the_command_line_is_one_line(capsys):
    assert main(["check", "ropespec.implementations.biases:alibi", "--family", "alibi", "--expect",
                 '{"alibi_bias_max": -1}']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "alibi_bias_max" in err[0] and "Traceback" not in err[0]


def symmetric(n_heads, q_positions, k_positions):
    m = np.array(press_slopes(n_heads))[:, None, None]
    return -m * np.abs(np.asarray(q_positions)[None, :, None] - np.asarray(k_positions)[None, None, :])


def causal(n_heads, q_positions, k_positions):
    m = np.array(press_slopes(n_heads))[:, None, None]
    return -m * (np.asarray(q_positions)[None, :, None] - np.asarray(k_positions)[None, None, :])


def test_an_encoder_s_symmetric_bias_passes_and_a_decoder_s_is_one_sided_there():
    e = Expect.from_dict({"dtype": "float64", "bias_symmetric": True})
    assert check(symmetric, e, family="alibi", profile="ci", seed=1).passed
    r = check(causal, e, family="alibi", profile="ci", seed=1, invariants=["alibi.softmax-rows"])
    assert not r.passed and {x.diagnosis for x in r.results if x.status == "fail"} == {"one-sided"}, r.report()
    # and a symmetric bias where the causal one is meant is right on every key a causal softmax sees
    assert check(symmetric, Expect(dtype="float64"), family="alibi", profile="ci", seed=1).passed




@pytest.fixture(scope="module")
def transformers_here():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


@pytest.mark.parametrize("target", ["bloom", "mpt"])
def test_bloom_s_and_mpt_s_alibi_hold_in_the_default_class(target, transformers_here):
    """In float32 here; README's command checks both in bfloat16 (tests/test_readme.py runs it)."""
    dtype = "float32"
    r = check(f"ropespec.implementations.adapters.hf_biases:{target}", Expect(dtype=dtype), array="torch", family="alibi",
              profile="ci", seed=1)
    assert r.passed, r.report()


def test_bloom_in_bfloat16_breaks_the_strict_class_past_255(transformers_here):
    e = Expect(dtype="bfloat16", angle_dtype="exact", inv_freq_dtype="exact")
    r = check("ropespec.implementations.adapters.hf_biases:bloom", e, array="torch", family="alibi", profile="ci", seed=1,
              invariants=["alibi.precision"])
    (res,) = [x for x in r.results if x.applicable]
    assert res.status == "fail" and res.diagnosis == "bias-precision", res.message
    assert "held up to p = 255" in res.message and "query 511" in res.message


def test_bloom_s_batched_bias_keeps_each_left_padded_row_and_head_its_own(transformers_here):
    """BLOOM's build_alibi_tensor on a left-padded mask of three rows, read through its (batch x heads) reshape."""
    r = check("ropespec.implementations.adapters.hf_biases:bloom", Expect(dtype="float32"), array="torch", family="alibi",
              layout="bhqk", profile="ci", seed=1, invariants=["alibi.per-head"])
    assert r.passed and [x.invariant for x in r.results if x.applicable] == ["alibi.per-head"], r.report()


def test_t5_s_compute_bias_holds_the_lookup_and_every_bucket_invariant_through_it(transformers_here):
    """T5Attention.compute_bias with the probe's table as its learned bias, queries from past_seen_tokens on."""
    r = check("ropespec.implementations.adapters.hf_biases:t5", Expect(dtype="float32"), array="torch", family="t5-bias",
              profile="ci", seed=1)
    assert r.passed and {x.invariant for x in r.results if x.applicable} >= {"t5-bias.lookup", "t5-bias.conformance"}, \
        r.report()


def test_a_lookup_is_told_from_a_bucket_function_by_its_first_parameter():
    r = check(biases.t5_bucket, family="t5-bias", profile="dev", seed=1)
    assert r.passed and "t5-bias.lookup" not in {x.invariant for x in r.results if x.applicable}, r.report()
    r = check(biases.t5_lookup, family="t5-bias", profile="dev", seed=1)
    assert r.passed and "t5-bias.lookup" in {x.invariant for x in r.results if x.applicable}, r.report()


def test_a_lookup_that_drops_the_decoding_offset_is_named_so_by_every_property():
    """Its buckets can only be read with a query past 0, where it is wrong: the bucket properties name the offset
    from the lookup's own evidence (query at 0 against query at P), not a bucket boundary."""
    r = check("ropespec.implementations.zoo.t5_bias.t5_lookup_from_first_query:make", family="t5-bias", profile="ci", seed=1)
    words = {x.invariant: x.diagnosis for x in r.results if x.applicable}
    assert len(words) == 6 and set(words.values()) == {"position-offset"}, words


BLOOM_COPY = """
import math
import numpy as np

def _slopes(n):
    p2 = lambda n: [(2 ** (-2 ** -(math.log2(n) - 3))) ** (i + 1) for i in range(n)]
    if math.log2(n).is_integer():
        return p2(n)
    c = 2 ** math.floor(math.log2(n))
    return p2(c) + _slopes(2 * c)[0::2][: n - c]

def build_alibi_tensor(attention_mask, num_heads, dtype):
    batch, n = attention_mask.shape
    positions = (np.cumsum(attention_mask, axis=-1) - 1) * attention_mask
    alibi = np.array(_slopes(num_heads))[None, :, None] * positions[:, None, :]
    return alibi.reshape(batch * num_heads, 1, n).astype(dtype)

def build_alibi_tensor_heads_first(attention_mask, num_heads, dtype):
    batch, n = attention_mask.shape
    positions = (np.cumsum(attention_mask, axis=-1) - 1) * attention_mask
    alibi = np.array(_slopes(num_heads))[:, None, None] * positions[None, :, :]
    return alibi.reshape(batch * num_heads, 1, n).astype(dtype)
"""


def test_a_user_s_copy_of_bloom_s_builder_is_a_target_as_it_is(tmp_path):
    """BLOOM's signature, build_alibi_tensor(attention_mask, num_heads, dtype), in a user's numpy: called with a
    left-padded mask as BLOOM's model calls it; its copy that builds (heads, batch) fails with layout."""
    (tmp_path / "bloom_copy.py").write_text(BLOOM_COPY)
    ok = check(f"{tmp_path / 'bloom_copy.py'}:build_alibi_tensor", family="alibi", layout="bhqk", profile="ci", seed=1)
    assert ok.passed and len([x for x in ok.results if x.applicable]) == 5, ok.report()
    bad = check(f"{tmp_path / 'bloom_copy.py'}:build_alibi_tensor_heads_first", family="alibi", layout="bhqk",
                profile="ci", seed=1)
    words = {x.invariant: x.diagnosis for x in bad.results if x.status == "fail"}
    assert words == {"alibi.per-head": "layout"}, bad.report()


def test_transformers_builders_are_targets_as_they_are(transformers_here):
    for target, layout in (("bloom.modeling_bloom:build_alibi_tensor", "bhqk"),
                           ("mpt.modeling_mpt:build_mpt_alibi_tensor", "nd")):
        r = check(f"transformers.models.{target}", family="alibi", array="torch", layout=layout, profile="ci", seed=1)
        assert r.passed and not r.unchecked, r.report()


def test_the_bhqk_layout_is_alibi_s_alone(capsys):
    assert main(["check", "ropespec.implementations.biases:xpos", "--family", "xpos", "--layout", "bhqk"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "--layout bhqk: a layout of ALiBi bias functions (--family alibi); drop it with --family xpos")
    assert main(["check", "ropespec.implementations.biases:alibi", "--family", "alibi", "--layout", "bshd"]) == 2
    assert "--layout bshd: a layout of RoPE apply functions (--family rope)" in capsys.readouterr().err


def test_falcon_rounds_its_slopes_to_bfloat16_in_float32(transformers_here):
    """Falcon's build_alibi_tensor: slopes[..., None].bfloat16() * arange_tensor, whatever the dtype (README)."""
    r = check("ropespec.implementations.adapters.hf_biases:falcon", Expect(dtype="float32"), array="torch", family="alibi",
              profile="ci", seed=1, invariants=["alibi.slopes"])
    (res,) = [x for x in r.results if x.applicable]
    assert res.status == "fail" and res.diagnosis == "bias-precision" and "bfloat16" in res.message, res.message


def test_the_adapters_decline_a_symmetric_bias(transformers_here):
    r = check("ropespec.implementations.adapters.hf_biases:bloom", Expect.from_dict({"bias_symmetric": True}), array="torch", family="alibi",
              profile="ci", seed=1, allow_skip=True)
    assert r.unchecked and "causal" in r.nothing_checked()[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rotary_embedding_torch_s_xpos_holds_over_one_sequence_and_fails_decoding(dtype):
    """rotate_queries_and_keys holds; rotate_queries_with_cached_keys centres the queries' exponent on their own
    count and the keys' on theirs, so its scales do not cancel (README)."""
    pytest.importorskip("torch")
    pytest.importorskip("rotary_embedding_torch")
    e = Expect(head_dim=64, convention="interleaved", dtype=dtype)
    full = check("ropespec.implementations.adapters.rotary_xpos:queries_and_keys", e, array="torch", family="xpos",
                 profile="ci", seed=1)
    assert full.passed, full.report()
    cached = check("ropespec.implementations.adapters.rotary_xpos:cached_keys", e, array="torch", family="xpos", profile="ci",
                   seed=1)
    words = {x.diagnosis for x in cached.results if x.status == "fail"}
    assert words == {"xpos-scale"} and len([x for x in cached.results if x.status == "fail"]) == 3, cached.report()


def test_the_shipped_xpos_holds_and_the_adapter_declines_another_layout():
    assert check("ropespec.implementations.biases:xpos", None, family="xpos", dtype="float64", profile="ci", seed=1).passed
    pytest.importorskip("torch")
    pytest.importorskip("rotary_embedding_torch")
    r = check("ropespec.implementations.adapters.rotary_xpos:queries_and_keys", Expect(head_dim=64), array="torch",
              family="xpos", profile="ci", seed=1, allow_skip=True)
    assert r.unchecked and "interleaved" in r.nothing_checked()[0]


# -- fingerprints ---------------------------------------------------------------------------------------------------
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _fingerprint(capsys, *args) -> tuple[int, str]:
    code = main(["fingerprint", *args])
    return code, capsys.readouterr().out


def test_the_alibi_fingerprint_recovers_the_rule_and_names_another(capsys):
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases.py:alibi", "--family", "alibi")
    assert code == 0 and "bias max 8" in out and "12 heads: Press et al.'s" in out, out
    assert "row constant (softmax ignores it): 0: the distance form" in out and '"bias_symmetric":false' in out, out
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases_bugs.py:alibi_geometric", "--family", "alibi")
    assert code == 0 and "12 heads: geometric over all 12 heads" in out, out
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases_bugs.py:alibi_sign", "--family", "alibi")
    assert code == 0 and "sign: the bias grows with the distance" in out and "bias max 8" in out, out
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases.py:slopes", "--family", "alibi")
    assert code == 0 and "computes the slopes alone" in out, out


def test_the_alibi_fingerprint_reads_bloom_s_and_mpt_s_row_constants_and_falcon_s_rounding(capsys, transformers_here):
    said = {}
    for target in ("bloom", "mpt", "falcon"):
        code, said[target] = _fingerprint(capsys, f"ropespec.implementations.adapters.hf_biases:{target}", "--family", "alibi",
                                          "--array", "torch", "--max-position", "70000")
        assert code == 0, said[target]
    assert "BLOOM's m_h j" in said["bloom"] and "float32's unit roundoffs" in said["bloom"], said["bloom"]
    assert "MPT's m_h (j - L + 1)" in said["mpt"], said["mpt"]
    assert "the rule's rounded to bfloat16 or float16" in said["falcon"], said["falcon"]


def test_the_t5_fingerprint_finds_t5_s_boundaries_and_the_swapped_halves(capsys):
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases.py:bucket", "--family", "t5-bias")
    assert code == 0 and "matches T5's _relative_position_bucket" in out, out
    assert "keys after the query: buckets 17..31, one per distance to 8" in out, out
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases_bugs.py:bucket_swapped", "--family", "t5-bias")
    assert code == 0 and "is not T5's bucket function" in out and "keys after the query: buckets 1..15" in out, out


def test_the_xpos_fingerprint_recovers_the_scale_base_and_sees_centres_apart(capsys, tmp_path):
    x = '{"head_dim": 64, "convention": "interleaved"}'
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases.py:xpos", "--family", "xpos", "--expect", x, "--json",
                             str(tmp_path / "fp.json"))
    assert code == 0 and "S = 512 ±" in out and "one centre" in out, out
    fp = json.loads((tmp_path / "fp.json").read_text())
    assert fp["family"] == "xpos" and fp["expect"] == {"xpos_scale_base": 512.0}, fp
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases_bugs.py:xpos_decay_reversed", "--family", "xpos", "--expect", x)
    assert code == 0 and "decay reversed" in out, out
    code, out = _fingerprint(capsys, f"{EXAMPLES}/biases_bugs.py:xpos_keys_like_queries", "--family", "xpos", "--expect", x)
    assert code == 0 and "not a function of m - n alone" in out and "apart" in out and "--expect" not in out, out


def test_a_fingerprint_of_a_family_it_cannot_probe_is_one_line(capsys):
    assert main(["fingerprint", f"{EXAMPLES}/biases.py:alibi", "--family", "sinusoidal"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--family: ropespec fingerprint probes rope, alibi, t5-bias, xpos" in err, err


def test_a_bias_failure_says_its_expectation_in_the_family_s_words_and_its_replay_reproduces_it(capsys):
    target = f"{EXAMPLES}/biases_bugs.py:alibi_sign"
    assert main(["check", target, "--family", "alibi", "--invariant", "alibi.slopes", "--seed", "3"]) == 1
    out = capsys.readouterr().out
    assert "expect = ALiBi causal -m_h (i - j), slopes of bias max 8, float32" in out, out
    (replay,) = [line.split("replay: ", 1)[1] for line in out.splitlines() if "replay: " in line]
    assert "head_dim" not in replay and "rope_theta" not in replay, replay
    assert main(shlex.split(replay)[1:]) == 1 and "fail [bias-sign]" in capsys.readouterr().out


@pytest.mark.parametrize("layout", ["nd", "bhqk"])
@pytest.mark.parametrize("max_position", [2, 3, 6])
def test_few_positions_are_checked_below_max_position_not_an_error_of_the_suite(layout, max_position):
    """A shift needs room, a batch needs keys: every case stays below max_position (shifts included), or the
    property skips with the reason."""
    r = check("ropespec.implementations.biases:alibi", family="alibi", layout=layout, dtype="float64", profile="ci", seed=1,
              max_position=max_position)
    assert not [x for x in r.results if x.status == "error"] and r.passed, r.report()
