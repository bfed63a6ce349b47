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
