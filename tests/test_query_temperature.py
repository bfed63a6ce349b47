"""A query temperature by position (Llama 4's NoPE layers, Ministral 3, Mistral 4): its definition, its steps, and the
attention family's properties about it on the shipped numpy attention."""

import math

import numpy as np
import pytest

from ropespec.spec import Expect, ExpectationError, tables


def test_the_temperature_steps_at_multiples_of_its_length_less_its_offset():
    """tau(p) = 1 + beta ln(1 + floor((p + offset) / L)): Llama 4's (offset 1) first rises at p = L - 1, Mistral's at L."""
    llama4 = Expect.from_dict({"head_dim": 8, "query_temperature_beta": 0.1, "query_temperature_length": 8192,
                               "query_temperature_offset": 1})
    mistral = llama4.replace(query_temperature_offset=0)
    at = [0, 8190, 8191, 8192, 16383, 16384]
    assert np.allclose(tables.query_temperature(llama4, at), [1, 1, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2),
                                                              1 + 0.1 * math.log(3), 1 + 0.1 * math.log(3)])
    assert np.allclose(tables.query_temperature(mistral, at), [1, 1, 1, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2),
                                                               1 + 0.1 * math.log(3)])
    assert llama4.params("attention").steps(20000) == [8191, 16383]
    assert np.array_equal(tables.query_temperature(Expect(head_dim=8), at), np.ones(len(at)))  # none: 1 everywhere
    assert "query temperature 1 + 0.1 ln(1 + floor((p + 1) / 8192))" in llama4.describe()
    assert Expect.from_json(llama4.to_json()) == llama4


@pytest.mark.parametrize("key, value, says", [("query_temperature_beta", -0.1, ">= 0"),
                                              ("query_temperature_length", 0, "integer >= 1"),
                                              ("query_temperature_offset", 2, "0 or 1")])
def test_a_temperature_out_of_range_is_one_line_naming_its_field(key, value, says):
    with pytest.raises(ExpectationError) as info:
        Expect.from_dict({"head_dim": 8, key: value})
    assert info.value.field == key and says in str(info.value), str(info.value)


def test_the_shipped_attention_holds_the_temperature_and_shift_invariance_within_its_steps():
    """The shipped numpy attention under a tempered expectation (steps every 64 positions, grouped-query heads): the
    temperature holds across its steps, shift-invariance holds for the shifts that keep every query on its step."""
    from ropespec import check

    e = {"head_dim": 16, "max_position": 512, "n_heads": 4, "n_kv_heads": 2, "query_temperature_beta": 0.1,
         "query_temperature_length": 64, "query_temperature_offset": 1, "dtype": "float64"}
    result = check("ropespec.implementations.attention:make", expect=e, family="attention", seed=0)
    statuses = {r.invariant: r.status for r in result.reports[0].results if r.applicable}
    assert statuses["attention.query-temperature"] == "pass" and statuses["attention.shift-invariance"] == "pass"
    assert set(statuses.values()) == {"pass"}, statuses


def test_a_rope_run_says_the_temperature_it_does_not_check():
    """The query temperature meets positions only in attention: under a tempered expectation (ministral-3) a rope
    function's header says that the attention family checks it and this run does not (its properties pass a RoPE with
    no temperature, rightly), and the attention family's own header states it without that remark."""
    from ropespec.implementations.loader import load_implementation
    from ropespec.implementations.shape import CallShape
    from ropespec.spec import presets

    e = presets.get("ministral-3")
    rope = load_implementation("ropespec.implementations.numpy_rope:make", expect=e, isolate=False)
    said = rope.describe()
    assert "query temperature 1 + 0.1 ln(1 + floor((p) / 16384))" in said
    assert "its query temperature is the attention family's: --family attention checks it, not this run" in said
    attention = load_implementation("ropespec.implementations.attention:make", expect=e, isolate=False,
                                    shape=CallShape(family="attention"))
    assert "not this run" not in attention.describe() and "query temperature" in attention.describe()
    plain = load_implementation("ropespec.implementations.numpy_rope:make", expect=Expect(head_dim=8), isolate=False)
    assert "not this run" not in plain.describe()


def test_a_nope_layer_is_attention_with_q_and_k_unturned():
    """attention_nope (Llama 4's no_rope_layers): the exact attention is softmax(tau q . k / sqrt(d)) v with neither q
    nor k turned, the temperature still by position; the expectation says so, and refuses a value that is no bool."""
    from ropespec.reference.encodings import attention

    e = Expect.from_dict({"head_dim": 8, "max_position": 512, "attention_nope": True, "query_temperature_beta": 0.1,
                          "query_temperature_length": 64, "query_temperature_offset": 1, "dtype": "float64"})
    assert "NoPE (q and k not turned)" in e.describe() and e.params("attention").label == "NoPE and query temperature"
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 5, 8))
    pos = np.arange(60, 65)  # across the step at p = 63
    tau = 1 + 0.1 * np.log1p(np.floor((pos + 1) / 64))
    scores = np.where(np.tril(np.ones((5, 5), dtype=bool)), tau[:, None] * (q @ k.T) / np.sqrt(8), -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    assert np.allclose(attention(e, q, k, v, pos, True), (w / w.sum(axis=1, keepdims=True)) @ v, rtol=1e-13)
    assert not np.allclose(attention(e.replace(attention_nope=False), q, k, v, pos, True), attention(e, q, k, v, pos, True))
    with pytest.raises(ExpectationError) as info:
        Expect.from_dict({"head_dim": 8, "attention_nope": "yes"})
    assert info.value.field == "attention_nope"


def test_the_shipped_attention_holds_llama_4s_nope_layers_and_its_ported_rope_is_named():
    """Under llama-4-scout-nope (40 query heads over 8, no RoPE, Llama 4's temperature) the shipped numpy attention holds
    every attention invariant; the same attention turning q and k (a NoPE layer ported with its model's RoPE) fails
    with nope."""
    from ropespec import check

    e = dict(presets_dict("llama-4-scout-nope"), n_heads=4, n_kv_heads=2)
    result = check("ropespec.implementations.attention:make", expect=e, family="attention", seed=0)
    statuses = {r.invariant: r.status for r in result.reports[0].results if r.applicable}
    assert len(statuses) >= 6 and set(statuses.values()) == {"pass"}, statuses
    turned = check("ropespec.implementations.zoo.attention.nope_turned:make", expect=e, family="attention", seed=0,
                   invariants=["attention.causal"])
    [r] = [r for r in turned.reports[0].results if r.applicable]
    assert (r.status, r.diagnosis) == ("fail", "nope"), (r.status, r.diagnosis, r.message[-300:])
    assert "turned by RoPE, where the expectation's layer has no RoPE" in r.message


def presets_dict(name: str) -> dict:
    from ropespec.spec import presets

    return presets.get(name).to_dict()


@pytest.mark.parametrize("command", [["check", "ropespec.implementations.numpy_rope:make"],
                                     ["precision", "ropespec.implementations.numpy_rope:make"],
                                     ["fingerprint", "ropespec.implementations.numpy_rope:make"],
                                     ["golden", "--positions", "1,2", "--out", "-"]])
def test_a_nope_layer_has_no_rope_to_check_outside_attention(command, cli):
    """A NoPE layer's expectation states no RoPE: a rope run, the precision sweep, a fingerprint and golden data refuse
    it in one line naming the key, exit 2, and point at the family that checks it."""
    code, out, err = cli(*command, "--expect", "llama-4-scout-nope")
    assert code == 2, (code, out[-500:], err[-500:])
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert "attention_nope: true says the layer turns neither q nor k" in line and "--family attention" in line, line
