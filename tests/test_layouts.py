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
from tests.code_scan import ROOT, code_files, comparisons, named

#: a name is about a form or a layout when it says so (``shape.form``, ``case["layout"]``, ``rows``)
_ABOUT = {"form": named(("form",)), "layout": named(("layout", "rows"))}


def name_comparisons(paths: list[Path]) -> list[str]:
    """Every comparison of something named a form (a layout, rows) with a form's (a layout's) name, outside the
    registries: the question its object answers instead."""
    vocab = {"form": {f.name for f in FORMS_REGISTERED.values()} | set(FORMS), "layout": set(layouts.REGISTRY)}
    return [f"{path.name}:{node.lineno}: {ast.unparse(node)}"
            for path in paths for what, names in vocab.items() for node in comparisons(path, names, _ABOUT[what])]


def _code() -> list[Path]:
    # the registries: the forms' base and spec/layouts.py compare their own names
    registries = {ROOT / "implementations" / "families" / "base.py", ROOT / "spec" / "layouts.py"}
    return [p for p in code_files() if p not in registries]


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
    with pytest.raises(ShapeError, match="--layout bshd: a layout of the apply or complex form; drop it with --form kernel"):
        CallShape(form="kernel", layout="bshd")


def test_the_batched_layouts_put_the_canonical_axes_where_their_names_say():
    canonical = "bshd"
    for name in ("bshd", "bhsd", "sbhd"):
        assert "".join(canonical[i] for i in layouts.get(name).axes) == name
