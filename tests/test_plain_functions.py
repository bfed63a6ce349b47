"""A correct function checked as a plain function f(x, positions) passes, whatever its expectation.

A plain function computes exactly one expectation; no property may check it under another (it once
did: scaling.bounded compared a factor-8 llama3 function with the default table). Every shipped factory's
function, at every kind of preset and every scaling type, wrapped as a plain function, passes ropespec check.
"""

from __future__ import annotations

import pytest

from ropespec import check
from ropespec.inputs import parse_expect
from ropespec.spec import methods, presets

#: every scaling method's first canonical example (ropespec.spec.methods) for head_dim 64 and an original length of 4096
SCALING = {m.name: next(iter(m.examples(32, 4096).values())) for m in methods.REGISTRY.values() if m.scales}
def _kinds(names):
    """One preset per kind of expectation (rope_type, convention, partial rotary, head_dim): presets that differ
    only in base or reach (mistral-7b-v0.1 and codellama-7b are llama2-7b's kind) bind the same way."""
    seen, out = set(), []
    for name in names:
        e = parse_expect(name)
        kind = (e.rope_type, e.convention, e.rotary_dim < e.head_dim, e.head_dim)
        if kind not in seen:
            seen.add(kind)
            out.append((name, e))
    return out


EXPECTATIONS = _kinds(presets.rotary()) + [
    (rope_type, parse_expect({"head_dim": 64, "rope_theta": 10000.0, "max_position": 65536, "rope_scaling": s}))
    for rope_type, s in SCALING.items()
]


#: float32 at every expectation; float64 where there is a scaling method (what a rebinding would break), once per
#: scaling type (the presets with yarn and llama3 scaling are the scaling types' float64 cases) and for deepseek-v3's
#: rope_interleave convention
CASES = [(n, e, "float32") for n, e in EXPECTATIONS] + [
    (n, e, "float64") for n, e in EXPECTATIONS if e.rope_scaling and (n in SCALING or e.convention == "rope_interleave")]


@pytest.mark.parametrize("name, expect, dtype", CASES, ids=[f"{n}-{d}" for n, _, d in CASES])
def test_numpy_factory_as_a_plain_function_passes(name, expect, dtype):
    from ropespec.implementations.numpy_rope import make

    e = expect.replace(dtype=dtype)
    f = make(e)
    result = check(lambda x, positions: f(x, positions), e, seed=1)
    assert result.passed, result.report()


def test_stdlib_factory_as_a_plain_function_passes():
    from ropespec.implementations.stdlib_rope import make

    e = parse_expect("llama2-7b").replace(dtype="float64")  # the stdlib implementation has no scaling methods
    f = make(e)
    result = check(lambda x, positions: f(x, positions), e, array="list", seed=1)
    assert result.passed, result.report()


@pytest.mark.parametrize("name", ["llama3.1-8b", "qwen2.5-7b-yarn"])
def test_torch_factory_as_a_plain_function_passes(name):
    pytest.importorskip("torch")
    from ropespec.implementations.torch_rope import make

    e = parse_expect(name).replace(dtype="float32")
    f = make(e)
    result = check(lambda x, positions: f(x, positions), e, array="torch", seed=1)
    assert result.passed, result.report()


def test_a_plain_function_is_never_bound_to_another_expectation():
    from ropespec.implementations import load_implementation
    from ropespec.implementations.contract import Unsupported

    e = parse_expect("llama3.1-8b")
    s = load_implementation(lambda x, positions: x, expect=e)
    assert s.bind(e.replace(max_position=1024, angle_dtype="exact")) is not None  # same function, other reach
    with pytest.raises(Unsupported, match="needs a factory make"):
        s.bind(e.replace(rope_scaling=dict(e.to_dict()["rope_scaling"], factor=1.0)))


def test_max_position_never_changes_what_is_expected():
    """Correct Phi-3 code (LongRoPE without an explicit factor) checked further than its configuration
    reaches: the attention factor expected is still the configuration's, sqrt(1 + ln 32 / ln 4096)."""
    from ropespec.implementations.numpy_rope import make

    e = parse_expect({"head_dim": 96, "max_position": 131072, "rope_scaling": {
        "rope_type": "longrope", "original_max_position_embeddings": 4096,
        "short_factor": [1.0 + i / 96 for i in range(48)], "long_factor": [1.0 + i / 12 for i in range(48)]}})
    f = make(e)
    result = check(lambda x, positions: f(x, positions), e, max_position=2**20, seed=1,
                   invariants=["scaling.attention-factor", "rope.conformance"])
    assert result.passed, result.report()


def test_worst_is_the_ratio_to_the_bound_checked():
    """A pass says how close it came to its own bound: worst <= 1 (scaling.bounded once printed 1.6e+07)."""
    from ropespec.implementations.numpy_rope import make

    e = parse_expect("llama3.1-8b")
    f = make(e)
    result = check(lambda x, positions: f(x, positions), e, seed=1,
                   invariants=["scaling.bounded", "scaling.band-edges", "scaling.attention-factor"])
    assert result.passed, result.report()
    assert all(r.worst is not None and r.worst <= 1.0 for r in result.results if r.status == "pass"), \
        [(r.invariant, r.worst) for r in result.results]
    # a table other than the expected one but within [theta/s, theta] passes, and says how close it came
    swapped = check("ropespec.implementations.zoo.rope.yarn_beta_swapped:make", seed=1, invariants=["scaling.bounded"],
                    expect={"head_dim": 64, "max_position": 16384, "rope_scaling": {
                        "rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}})
    [r] = swapped.results
    assert r.status == "pass" and r.worst <= 1.0, (r.status, r.worst, r.message)


@pytest.mark.parametrize("body, word", [
    ("    return np.full_like(x, np.nan)\n", "non-finite"),
    ("    y = x.astype(np.float64)\n"  # interleaved pairs, checked as half
     "    d = y.shape[1]\n"
     "    ang = positions[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)\n"
     "    a, b = y[:, 0::2].copy(), y[:, 1::2].copy()\n"
     "    y[:, 0::2], y[:, 1::2] = a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)\n"
     "    return y.astype(x.dtype)\n", "convention"),
])
def test_attention_factor_names_the_root_cause(tmp_path, body, word):
    """A norm read along the expected pairs is no attention factor when the output is NaN or pairs
    otherwise: scaling.attention-factor says what it follows from, with the root word."""
    p = tmp_path / "structural.py"
    p.write_text("import numpy as np\ndef rope(x, positions):\n" + body)
    result = check(f"{p}:rope", "qwen2.5-7b-yarn", seed=1, invariants=["scaling.attention-factor"])
    [r] = result.results
    assert r.status == "fail" and r.diagnosis == word and f"follows from {word}" in r.message, (r.diagnosis, r.message)


def test_composition_holds_for_a_correct_implementation_with_an_attention_factor():
    """f(f(x, a), b) = g f(x, a + b) when the attention factor g != 1 (yarn): the property divides it out once.
    Without that correction the correct numpy implementation failed composition under qwen2.5-7b-yarn."""
    from ropespec.properties.framework import all_properties, PROPERTIES, run_property
    from ropespec.implementations import load_implementation
    from ropespec.spec import presets

    all_properties()
    e = presets.get("qwen2.5-7b-yarn")
    from ropespec import reference

    assert reference.attention_factor(e) != 1.0
    impl = load_implementation("ropespec.implementations.numpy_rope:make", dtype="float32", expect=e)
    r = run_property(PROPERTIES["composition"], impl, profile="ci", seed_value=0)
    assert r.status == "pass", r.message


MODULE = '''
import torch


class Rope(torch.nn.Module):
    def __init__(self, dim=64, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))

    def forward(self, x, positions):
        ang = positions[:, None].to(torch.float32) * self.inv_freq
        c, s = ang.cos(), ang.sin()
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).to(x.dtype)


rope = Rope()
'''


def test_a_torch_module_instance_is_its_forward(tmp_path, monkeypatch, cli):
    """README says a torch module's forward is a target: the instance itself is read by its forward's signature (its
    __call__ says only (*args, **kwargs), and was refused as a TARGET of no contract)."""
    pytest.importorskip("torch")
    (tmp_path / "my_torch_rope.py").write_text(MODULE)
    code, out, err = cli("check", "my_torch_rope.py:rope", "--array", "torch", "--expect",
                         '{"head_dim": 64, "max_position": 4096}', "--invariant", "rope.conformance", "--seed", "0",
                         cwd=tmp_path)
    assert code == 0, out + err
    assert "my_torch_rope.py:rope (plain, torch arrays)" in out, out
