"""--array jax: the shipped JAX implementation passes in every form and dtype, jax arrays cross the boundary exactly
(bfloat16 included), and without jax the check skips with the reason."""

import numpy as np
import pytest

from ropespec.implementations import CallShape, arrays, load_implementation
from ropespec.properties.framework import all_properties, PROPERTIES, run_property
from ropespec.spec.expectation import Expect

all_properties()

# (factory, form, layout, the property that checks that form)
FORMS = [("make", "apply", "conformance"), ("table", "table", "angles"), ("kernel", "kernel", "rotation"),
         ("qk", "qk", "qk"), ("vllm", "vllm", "layout")]


def test_the_jax_implementation_passes_in_every_form_and_dtype():
    """In-process (one jax import, one compilation cache for every form); a fixed head_dim keeps the shapes jax
    compiles for few."""
    pytest.importorskip("jax")
    from ropespec.implementations import jax_rope

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


def _rope_rows(jnp, x, positions):
    """MaxText's way: eager jnp, timescale from the head dim, halves rotated."""
    d = x.shape[-1]
    timescale = 10000.0 ** (2 * jnp.arange(0, d // 2) / d)
    angles = positions[:, None].astype(jnp.float32) / timescale[None, :]
    sin, cos = jnp.sin(angles).astype(x.dtype), jnp.cos(angles).astype(x.dtype)
    first, second = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def test_a_jax_function_is_called_at_a_few_lengths_and_holds():
    """Every property's calls reach an eager jax function at a handful of row counts (8, 64, then powers of two): each
    shape is compiled once, not each drawn length; the padded rows change no verdict."""
    jax = pytest.importorskip("jax")
    lengths = set()

    def apply(x, positions):
        lengths.add(x.shape[0])
        return _rope_rows(jax.numpy, x, positions)

    e = Expect(head_dim=64, dtype="float32")
    s = load_implementation(apply, expect=e, array="jax", isolate=False)
    ran = [run_property(p, s, profile="ci", seed_value=0) for p in all_properties()
           if p.invariant in ("rope.conformance", "rope.composition", "rope.relative-position", "autograd.inverse-rotation")]
    assert ran and all(r.status == "pass" for r in ran), [(r.invariant, r.message) for r in ran if r.status != "pass"]
    assert lengths and all(n in (8, 64) or (n > 64 and n & (n - 1) == 0) for n in lengths), lengths
    assert len(lengths) <= 8, lengths


def test_a_table_that_reads_the_call_s_length_is_called_unpadded():
    """Dynamic NTK reads the sequence length off the call: its calls keep their own number of rows."""
    pytest.importorskip("jax")
    lengths = set()
    e = Expect.from_dict({"head_dim": 64, "dtype": "float32", "max_position": 8192,
                          "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}})

    def apply(x, positions):
        lengths.add(x.shape[0])
        return x

    s = load_implementation(apply, expect=e, array="jax", isolate=False)
    run_property(PROPERTIES["conformance"], s, profile="ci", seed_value=0)
    assert lengths and any(n not in (8, 64) and n & (n - 1) for n in lengths), lengths
