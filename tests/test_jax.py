"""--array jax: the shipped JAX implementation passes in every form and dtype, jax arrays cross the boundary exactly
(bfloat16 included), and without jax the check skips with the reason."""

import numpy as np
import pytest

from implementations import CallShape, arrays, load_implementation
from properties.framework import all_properties, PROPERTIES, run_property
from spec.expectation import Expect

all_properties()

# (factory, form, layout, the property that checks that form)
FORMS = [("make", "apply", "conformance"), ("table", "table", "angles"), ("kernel", "kernel", "rotation"),
         ("qk", "qk", "qk"), ("vllm", "vllm", "layout")]


def test_the_jax_implementation_passes_in_every_form_and_dtype():
    """In-process (one jax import, one compilation cache for every form); a fixed head_dim keeps the shapes jax
    compiles for few."""
    pytest.importorskip("jax")
    from implementations import jax_rope

    props = {p.name: p for p in all_properties()}
    cases = [(f, form, prop, "float32") for f, form, prop in FORMS]
    cases += [("make", "apply", "conformance", "float64")]  # bfloat16: README's example (tests/test_readme.py)
    for factory, form, prop, dtype in cases:
        e = Expect(head_dim=64, rotary_dim=32 if form == "vllm" else 64, dtype=dtype, max_position=1 << 20)
        s = load_implementation(getattr(jax_rope, factory), expect=e, array="jax", shape=CallShape(form=form), isolate=False)
        r = run_property(props[prop], s, profile="ci", seed_value=0)
        assert r.status == "pass", (factory, dtype, r.message)


def test_jax_arrays_cross_exactly_in_every_dtype():
    jax = pytest.importorskip("jax")
    x = np.array([[1.0, -0.5, 2.0**-8, 3.0]])
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        nx, npos = arrays.to_native(x, np.array([7]), "jax", dtype)
        assert isinstance(nx, jax.Array) and str(nx.dtype) == dtype and str(npos.dtype) == "int64"
        assert arrays.from_native(nx, "jax", (1, 4), dtype).tolist() == x.tolist()
    with pytest.raises(arrays.ArrayError, match="less precise than the promised float32"):
        arrays.from_native(arrays.to_native(x, np.array([7]), "jax", "bfloat16")[0], "jax", (1, 4), "float32")


def test_without_jax_the_check_skips_with_the_reason(monkeypatch):
    monkeypatch.setattr(arrays, "jax_module", lambda: None)
    s = load_implementation(lambda x, positions: x, array="jax", isolate=False)
    assert s.skip_reason == "jax is not installed (pip install -e '.[jax]')"
    r = run_property(PROPERTIES["conformance"], s, profile="ci", seed_value=0)
    assert r.status == "skip" and "jax is not installed" in r.message
