"""The scaling methods' registry (spec/methods/): one class per method, found by the registry, and nothing outside
it that asks which rope_type an expectation has by comparing its name."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import mpmath
import pytest

import reference
from spec import Expect, ExpectationError, methods, tables

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
    assert methods.names() == ("default", "linear", "ntk", "yarn", "llama3", "dynamic", "longrope")
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
        from spec.methods import ScalingMethod

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
