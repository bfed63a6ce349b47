"""Forms and layouts are registered objects (implementations/families, spec/layouts.py): what a property, an operation
or a message needs of one is asked of its object, and no code outside the registries compares a form's or a layout's
name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ropespec.implementations.families import REGISTRY as FORMS_REGISTERED
from ropespec.implementations.shape import CallShape, ShapeError
from ropespec.spec import layouts
from ropespec.spec.glossary import FORMS, LAYOUTS

ROOT = Path(__file__).resolve().parents[1]
CODE = ("spec", "reference", "properties", "implementations", "ropespec", "benchmarks", "conftest.py")
#: a name is about a form or a layout when it says so (``shape.form``, ``case["layout"]``, ``rows``)
_ABOUT = {"form": ("form",), "layout": ("layout", "rows")}


def _named(node, words) -> bool:
    if isinstance(node, ast.Attribute):
        return any(w in node.attr for w in words)
    if isinstance(node, ast.Name):
        return any(w in node.id for w in words)
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in words


def name_comparisons(paths: list[Path]) -> list[str]:
    """Every comparison of something named a form (a layout, rows) with a form's (a layout's) name, outside the
    registries: the question its object answers instead."""
    vocab = {"form": {f.name for f in FORMS_REGISTERED.values()} | set(FORMS), "layout": set(layouts.REGISTRY)}
    hits = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            words = {e.value for s in sides for e in ([s] + list(getattr(s, "elts", [])))
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            for what, names in vocab.items():
                if words & names and any(_named(s, _ABOUT[what]) for s in sides):
                    hits.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return hits


def _code() -> list[Path]:
    out = []
    for name in CODE:
        p = ROOT / name
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    # the registries: the forms' base and spec/layouts.py compare their own names
    return [p for p in out if p != ROOT / "implementations" / "families" / "base.py" and p != ROOT / "spec" / "layouts.py"]


def test_no_code_outside_the_registries_compares_a_form_or_a_layout():
    assert name_comparisons(_code()) == []


def test_the_count_sees_a_comparison(tmp_path):
    f = tmp_path / "stray.py"
    f.write_text("def f(shape, case, rows):\n    if shape.form == 'qk' or case['layout'] in ('thd', 'vllm'):\n"
                 "        return rows != 'nd'\n    return shape.form == 'qkv'\n")
    assert len(name_comparisons([f])) == 3


def test_the_glossary_and_the_options_list_the_chosen_layouts():
    assert list(LAYOUTS) == layouts.chosen() == [n for n, lay in layouts.REGISTRY.items() if lay.chosen]
    assert layouts.default() == CallShape().layout == layouts.chosen()[0]
    assert "vllm" not in LAYOUTS  # vLLM's rows follow from --form vllm


def test_every_layout_a_form_is_called_in_is_registered():
    for form in FORMS_REGISTERED.values():
        for name in form.layouts + ((form.rows,) if form.rows else ()):
            assert name in layouts.REGISTRY, (form.key, name)


def test_a_form_naming_an_unknown_layout_is_refused():
    from ropespec.implementations.families.base import Form

    with pytest.raises(ValueError, match="no layout 'bshdx'"):
        Form("rope", "stray", ((2,), "(x, positions)"), (), {}, lambda *a: None, layouts=("nd", "bshdx"))


@pytest.mark.parametrize("form, layout, rows, packed, batched", [
    ("apply", "nd", "nd", False, False),
    ("apply", "bhsd", "bhsd", False, True),
    ("apply", "thd", "thd", True, False),
    ("vllm", "nd", "vllm", False, False),
])
def test_a_call_shape_lays_out_its_rows_as_its_layout_or_its_form_says(form, layout, rows, packed, batched):
    shape = CallShape(form=form, layout=layout)
    assert shape.rows == rows and shape.laid_out.name == rows
    assert (shape.laid_out.packed, shape.laid_out.batched) == (packed, batched)
    assert shape.plain == (form == "apply" and layout == "nd")


def test_a_layout_of_the_apply_form_is_refused_for_another_form():
    with pytest.raises(ShapeError, match="--layout bshd: a layout of the apply form; drop it with --form kernel"):
        CallShape(form="kernel", layout="bshd")


def test_the_batched_layouts_put_the_canonical_axes_where_their_names_say():
    canonical = "bshd"
    for name in ("bshd", "bhsd", "sbhd"):
        assert "".join(canonical[i] for i in layouts.get(name).axes) == name
