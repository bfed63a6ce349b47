"""The scaling methods' registry (spec/methods/): one class per method, found by the registry, and nothing outside
it that asks which rope_type an expectation has by comparing its name."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import mpmath
import numpy as np
import pytest

from ropespec import reference
from ropespec.spec import Expect, ExpectationError, methods, presets, tables

ROOT = Path(__file__).resolve().parents[1]
#: the project's code (the tests compare what reports say, which is theirs to do)
CODE = ("spec", "reference", "properties", "implementations", "ropespec", "benchmarks", "conftest.py")


def _compares_a_method_name(node: ast.Compare) -> bool:
    names = set(methods.names())

    def names_one(o) -> bool:
        if isinstance(o, ast.Constant) and o.value in names:
            return True
        if isinstance(o, (ast.Tuple, ast.List, ast.Set)):
            return any(isinstance(x, ast.Constant) and x.value in names for x in o.elts)
        if isinstance(o, ast.Attribute) and o.attr == "rope_type":
            return True
        return isinstance(o, ast.Subscript) and isinstance(o.slice, ast.Constant) and o.slice.value == "rope_type"

    return any(names_one(o) for o in (node.left, *node.comparators))


def method_name_comparisons(roots=CODE, base: Path = ROOT) -> list[str]:
    """Every comparison, outside spec/methods/, of a rope_type (``e.rope_type``, ``s["rope_type"]``) or of a method's
    name ("yarn", ("dynamic", "longrope")): what the method's class answers instead."""
    hits = []
    for top in roots:
        for path in ([base / top] if top.endswith(".py") else sorted((base / top).rglob("*.py"))):
            rel = path.relative_to(base)
            if rel.parts[:2] == ("spec", "methods"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Compare) and _compares_a_method_name(node):
                    hits.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return hits


def test_no_code_outside_the_registry_compares_a_rope_type():
    assert method_name_comparisons() == []


def test_the_count_sees_a_comparison(tmp_path):
    (tmp_path / "mod.py").write_text('def f(e, s):\n    if e.rope_type == "yarn" or s["rope_type"] in ("dynamic",):\n'
                                     '        return 1\n    return e.convention != "yarnish"\n')
    assert len(method_name_comparisons(("mod.py",), tmp_path)) == 2


def test_every_method_is_registered_in_order_with_its_canonical_examples():
    assert methods.names() == ("default", "linear", "ntk", "yarn", "llama3", "dynamic", "longrope", "proportional")
    for m in methods.REGISTRY.values():
        for name, scaling in m.examples(12, 4096).items():
            e = Expect(head_dim=24, max_position=65536, rope_scaling=scaling)
            assert e.method is m and e.rope_type == m.name, name
            assert set(scaling) - {"rope_type"} <= m.keys


def test_a_method_is_one_class(monkeypatch):
    """A method defined anywhere is registered by its class statement alone: the expectation accepts its keys and
    refuses others by name, the reference's table and attention factor are the class's, strategies draw it and the
    properties that it promises apply to it."""
    monkeypatch.setattr(methods, "REGISTRY", dict(methods.REGISTRY))
    namespace = {}
    exec(textwrap.dedent('''
        import mpmath
        from ropespec.spec.methods import ScalingMethod

        class Halved(ScalingMethod):
            """Every frequency halved, and the factor stated as a key of its own."""
            name = "halved"
            required = frozenset({"halving"})
            promises = ("scaling.bounded",)

            def frequencies(self, expect, theta, table, variant):
                return [t / mpmath.mpf(expect.rope_scaling["halving"]) for t in theta]

            def attention_factor(self, expect):
                return mpmath.mpf("1.25")
    '''), namespace)
    assert "halved" in methods.names() and methods.promising("scaling.bounded")[-1] == "halved"
    e = Expect(head_dim=8, rope_scaling={"rope_type": "halved", "halving": 2})
    assert e.method is methods.get("halved")
    with mpmath.workprec(80):
        plain = tables.frequencies(e.replace(rope_scaling=None))
        assert tables.frequencies(e) == [t / 2 for t in plain]
    assert reference.attention_factor(e) == 1.25
    with pytest.raises(ExpectationError, match=r"rope_scaling.factor: unknown key for rope_type 'halved'"):
        Expect(head_dim=8, rope_scaling={"rope_type": "halved", "halving": 2, "factor": 2.0})
    with pytest.raises(ExpectationError, match=r"unknown 'third' \(known: default, .*, halved\)"):
        Expect(head_dim=8, rope_scaling={"rope_type": "third"})


#: Gemma 4's proportional RoPE as transformers computes it (_compute_proportional_rope_parameters), in numpy: the
#: first floor(p d / 2) pairs (i, i + d/2) turn at base^(-2i/d), the rest by nothing; and the twin that ignores p
PROPORTIONAL = '''
import numpy as np


def _rope(x, positions, p):
    d = x.shape[1]
    k = int(p * d // 2)
    inv = np.concatenate([1e6 ** (-np.arange(0, 2 * k, 2) / d), np.zeros(d // 2 - k)])
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], 1)), np.sin(np.concatenate([ang, ang], 1))
    half = np.concatenate([-x[:, d // 2:], x[:, :d // 2]], 1)
    return x * cos + half * sin


def gemma4(x, positions):
    return _rope(x, positions, 0.25)


def every_pair(x, positions):
    return _rope(x, positions, 1.0)
'''
GEMMA4 = ('{"head_dim": 64, "rope_theta": 1000000.0, "dtype": "float64", "max_position": 131072, '
          '"rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}')


def test_proportional_rope_is_a_method_whose_still_pairs_pass_through(cli, tmp_path):
    """Proportional RoPE added as one class: transformers' formula passes, with its pairs of frequency 0 checked to
    pass through (rope.partial-passthrough, skipped for every other expectation that rotates every dim), and the twin
    that turns every pair fails there with the word rotary-dim (the exponent over the turning dims is the zoo's
    proportional_rotated_dims)."""
    (tmp_path / "gemma4_rope.py").write_text(PROPORTIONAL)
    args = ("--expect", GEMMA4, "--invariant", "rope.conformance", "--invariant", "rope.partial-passthrough",
            "--json", "r.json")
    code, out, err = cli("check", "gemma4_rope.py:gemma4", *args, cwd=tmp_path)
    assert code == 0, out + err
    report = json.loads((tmp_path / "r.json").read_text())
    [result] = [r for r in report["implementations"][0]["results"] if r["invariant"] == "rope.partial-passthrough"]
    assert result["status"] == "pass"
    code, out, err = cli("check", "gemma4_rope.py:every_pair", *args, cwd=tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    [result] = [r for r in report["implementations"][0]["results"] if r["invariant"] == "rope.partial-passthrough"]
    assert code == 1 and result["status"] == "fail" and result["failure"]["diagnosis"] == "rotary-dim", out


def test_gemma4_config_reads_as_proportional_over_the_whole_head():
    """partial_rotary_factor inside proportional's rope parameters is the method's (which pairs turn), not a
    narrower rotary: Gemma 4's full-attention layers rotate all 512 dims, a quarter of the pairs turning."""
    transformers = pytest.importorskip("transformers")
    from ropespec.spec import hfconfig

    e = hfconfig.from_hf_config(transformers.Gemma4TextConfig().to_dict())
    assert (e.head_dim, e.rotary_dim, e.rope_theta) == (512, 512, 1e6)
    assert dict(e.rope_scaling) == {"rope_type": "proportional", "partial_rotary_factor": 0.25, "factor": 1.0}
    assert list(e.method.still_pairs(e)) == list(range(64, 256))


def _longrope(**extra) -> Expect:
    from ropespec.implementations.zoo.rope import longrope_served_by_length as served

    e = dict(served.EXPECT, rope_scaling={k: v for k, v in served.EXPECT["rope_scaling"].items() if k != "max_model_len"})
    e["rope_scaling"].update(extra)
    return Expect.from_dict(e)


def test_longrope_s_factors_follow_the_policy_the_expectation_states():
    """transformers' policy switches by the call's length; vLLM's (max_model_len) takes one table for every length,
    the long one once the served length exceeds the original length, else the short one."""
    by_length, served, short = _longrope(), _longrope(max_model_len=16384), _longrope(max_model_len=4096)
    assert [tables.table_variant(by_length, n) for n in (1, 4096, 4097)] == ["short", "short", "long"]
    assert {tables.table_variant(served, n) for n in (1, 4096, 4097, None)} == {"long"}
    assert {tables.table_variant(short, n) for n in (1, 4097, None)} == {"short"}
    assert (reference.thetas(served, 1) == reference.thetas(by_length, 4097)).all()
    with pytest.raises(ExpectationError, match="rope_scaling.max_model_len: must be an integer"):
        _longrope(max_model_len=0)


def test_vllm_s_policy_holds_code_that_follows_it_and_names_a_port_of_transformers():
    from ropespec import check

    e = _longrope(max_model_len=16384)
    props = ["scaling.longrope-switch", "rope.conformance"]
    assert check("ropespec.implementations.numpy_rope:make", e, profile="ci", seed=1, invariants=props).passed
    r = check("ropespec.implementations.zoo.rope.longrope_served_by_length:make", e, profile="ci", seed=1,
              invariants=props)
    failed = [x for x in r.results if x.status == "fail"]
    assert failed and {x.diagnosis for x in failed} == {"scaling"}, r.report()
    assert all("transformers' policy" in x.message for x in failed), r.report()


def test_sglang_s_dynamic_policy_holds_code_that_follows_it_and_names_a_port_of_transformers():
    """Dynamic NTK with a served length (max_model_len: SGLang's policy) is the table of that length at every length;
    code that follows it holds scaling.dynamic-length, and the same table grown with each call's length (transformers'
    policy) fails it by its word."""
    from ropespec import check
    from ropespec.implementations.zoo.rope import dynamic_served_by_length as member

    served = Expect.from_dict(member.EXPECT)
    by_length = served.replace(rope_scaling={k: v for k, v in served.rope_scaling.items() if k != "max_model_len"})
    assert all((reference.thetas(served, n) == reference.thetas(by_length, 16384)).all() for n in (1, 4096, 8192))
    assert not (reference.thetas(by_length, 1) == reference.thetas(by_length, 16384)).all()
    props = ["scaling.dynamic-length", "rope.conformance"]
    assert check("ropespec.implementations.numpy_rope:make", served, profile="ci", seed=1, invariants=props).passed
    r = check("ropespec.implementations.zoo.rope.dynamic_served_by_length:make", served, profile="ci", seed=1,
              invariants=props)
    failed = [x for x in r.results if x.status == "fail"]
    assert failed and {x.diagnosis for x in failed} == {"scaling"}, r.report()
    assert any(x.invariant == "scaling.dynamic-length" for x in failed), r.report()


def test_llama3_with_equal_band_factors_is_llama_4s_step():
    """Llama 4's config sets low_freq_factor = high_freq_factor = 1: no band, a step at wavelength L (transformers'
    ramp is 0/0 only on the step itself, which no pair of its ladder lands on); factors the other way round stay
    refused."""
    e = presets.get("llama-4-scout")
    th, th0 = reference.thetas(e), reference.thetas(e.replace(rope_scaling=None))
    wavelength = 2 * np.pi / th0
    assert np.allclose(th[wavelength < 8192], th0[wavelength < 8192], rtol=1e-15)
    assert np.allclose(th[wavelength > 8192], th0[wavelength > 8192] / 16, rtol=1e-15)
    assert (wavelength < 8192).any() and (wavelength > 8192).any()
    with pytest.raises(ExpectationError, match="high_freq_factor"):
        Expect.from_dict({**e.to_dict(), "rope_scaling": {**e.rope_scaling, "low_freq_factor": 4.0}})
