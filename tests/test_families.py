"""Families: one class each (ropespec.spec.families), one registry that everything else reads.

A family registered by a module of its own (here a temporary one) is in the command line's choices, the glossary's
family words, the rendered spec and the fingerprint's dispatch, with nothing else edited; and no code compares a
family by its string outside the registries.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from ropespec import specdoc
from ropespec.cli import parser
from ropespec.commands import fingerprint
from ropespec.implementations.families import base
from ropespec.inputs import UsageError
from ropespec.spec import families, params
from ropespec.spec.expectation import DEFAULT, Expect, ExpectationError
from tests.code_scan import code_files, comparisons, named

ROOT = Path(__file__).resolve().parents[1]

TOY = '''
from dataclasses import dataclass

import numpy as np

from ropespec.implementations.families.base import Bound, Form, Op, register
from ropespec.spec.families import Family
from ropespec.spec.params import Params


@dataclass(frozen=True)
class ToyParams(Params):
    family = "toy-bias"
    toy_slope: float = 1.0


class ToyBias(Family):
    name = "toy-bias"
    params = ToyParams
    means = "a toy bias registered by a test: b(i, j) = j - i"
    fingerprint = "toy_family:probe"


def probe(args, console, impl, outs):
    console.print(f"toy fingerprint of {args.target}")
    return 0


register(Form("toy-bias", "apply", ((2,), "(q_positions, k_positions)"), ("toy-bias.*",),
              {"bias": Op(lambda host, fn, e, q, k: np.asarray(fn(q, k), float), "toy(q, k)")},
              lambda host, fn, e: None, Bound))
'''


@pytest.fixture
def toy_family(tmp_path, monkeypatch):
    (tmp_path / "toy_family.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    import toy_family  # noqa: F401  (registers the family and its form)

    yield families.get("toy-bias")
    del families.REGISTRY["toy-bias"], base.REGISTRY[("toy-bias", "apply")], sys.modules["toy_family"]
    del params.REGISTRY["toy-bias"]


def _choices(command: str, option: str) -> list[str]:
    sub = next(a for a in parser()._actions if a.dest == "command").choices[command]
    return list(next(a for a in sub._actions if option in a.option_strings).choices)


def test_a_family_in_a_module_of_its_own_is_everywhere_a_family_is_listed(toy_family):
    assert toy_family.name in _choices("check", "--family")
    assert toy_family.name in _choices("fingerprint", "--family")
    assert families.words()["toy-bias"] == toy_family.means  # the glossary's family words
    document = specdoc.markdown()
    assert f"| `toy-bias` | {toy_family.means} | apply |" in document
    assert fingerprint.handler("toy-bias").__name__ == "probe"
    assert fingerprint.handler("alibi") is fingerprint.alibi
    with pytest.raises(UsageError, match="probes rope, alibi, t5-bias, xpos, toy-bias; got 'sinusoidal'"):
        fingerprint.handler("sinusoidal")


def test_without_the_module_the_family_is_nowhere(toy_family):
    del families.REGISTRY["toy-bias"]
    try:
        assert "toy-bias" not in _choices("check", "--family")
        assert "toy-bias" not in specdoc.markdown()
    finally:
        families.REGISTRY["toy-bias"] = toy_family


def test_a_family_s_parameter_block_is_the_expectation_s_keys_flat(toy_family):
    """The toy family's block is read from a file's flat keys, written back flat, and kept apart from the core."""
    e = Expect.from_dict({"toy_slope": 2.5, "head_dim": 64})
    assert e.params("toy-bias").toy_slope == 2.5 and e.params("alibi") == params.default("alibi")
    assert e.to_dict()["toy_slope"] == 2.5 and "toy_slope" not in DEFAULT.to_dict()
    assert Expect.from_json(e.to_json()) == e and e != DEFAULT.replace(head_dim=64)
    assert DEFAULT.replace(toy_slope=2.5, head_dim=64) == e


def test_every_parameter_block_is_its_family_s():
    """Each registered block belongs to a registered family that names it, and no key is two families' or the
    core's: the expectation's own fields are the core alone."""
    core = {f for f in Expect.__dataclass_fields__ if f != "family_params"}
    owners = params.owners()
    assert set(params.REGISTRY) <= set(families.REGISTRY)
    for name, block in params.REGISTRY.items():
        assert families.get(name).params is block
    assert not core & set(owners)
    keys = [f.name for block in params.REGISTRY.values() for f in dataclasses.fields(block)]
    assert len(keys) == len(set(keys))
    assert {"alibi_bias_max", "bias_symmetric", "xpos_scale_base", "video_time", "tokens_per_second"} <= set(owners)


def test_a_block_of_another_family_is_refused():
    from ropespec.spec.params.alibi import AlibiParams
    with pytest.raises(ExpectationError, match="family_params"):
        Expect(family_params={"xpos": AlibiParams()})


def test_a_form_of_an_unknown_family_is_refused():
    with pytest.raises(ValueError, match="--family: one of rope, sinusoidal"):
        base.Form("nope", "apply", None, (), {}, lambda host, fn, e: None)


#: the words of the registries, and where each may be compared
FAMILY_WORDS = set(families.REGISTRY)


def family_comparisons(paths) -> list[str]:
    """Every comparison of something called ``family`` (an attribute, a name, a key) with a family's word."""
    return [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{node.lineno}"
            for path in paths for node in comparisons(path, FAMILY_WORDS, named(("family",), exact=True))]


def _code() -> list[Path]:
    # spec/families and implementations/families are the registries
    return [p for p in code_files() if p.parent.name != "families"]


def test_no_code_outside_the_registries_compares_a_family():
    assert family_comparisons(_code()) == []


def test_the_count_sees_a_comparison(tmp_path):
    f = tmp_path / "stray.py"
    f.write_text("def f(shape, family):\n    return shape.family == 'rope' or family in ('alibi', 'xpos')\n")
    assert family_comparisons([f]) == ["stray.py:2", "stray.py:2"]
