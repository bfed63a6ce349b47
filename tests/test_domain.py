"""What ropespec hands an implementation, recorded call by call: the domain rule
(:meth:`ropespec.spec.expectation.Expect.outside_domain`): no call ropespec makes ever hands an implementation a position outside
[0, max_position) on any axis, in any family, form, layout or mode; and calls long enough to cross the tile sizes
kernels use (ropespec.properties.cases.TILE_LENGTHS), with more heads than one tile of 8 where a form has heads. Table-based code has no row -1
and no row max_position: SAM2's, timm's and CogVideoX's correct vision RoPE failed ``axes.separation`` alone when its
pinned case moved a row at max_position - 1 by -1 and the row at 0 with it.

The test wraps the parent's side of the process boundary (every operation's positions, as its form declares them,
:func:`ropespec.implementations.families.base.handed_positions`) and records what every property hands over, on an
implementation of every registered form, layout and decoder, at a small max_position where the edges are drawn
often. The guard itself (a call outside the domain is not made, and is an error of ropespec's) is tested too.
"""

from __future__ import annotations

import numpy as np
import pytest

from ropespec.implementations.families import base
from ropespec.implementations.families.base import REGISTRY
from ropespec.implementations.shape import CallShape
from ropespec.properties.framework import all_properties, run_property
from ropespec.inputs import load_implementations
from ropespec.spec.expectation import Expect

#: (name, target, call shape, array, dtype, expectation or None for the factory's drawn ones): one of every registered
#: form in every layout it is called in, a decoder of each form that has one, and a multi-axis RoPE of every kind
COVER = [
    ("apply-nd", "ropespec.implementations.numpy_rope:make", CallShape(), "numpy", "float64", None),
    ("apply-nd-pinned-axes", "ropespec.implementations.numpy_rope:make", CallShape(), "numpy", "float32",
     {"head_dim": 32, "mrope_section": [6, 5, 5], "mrope_interleaved": True}),
    ("apply-bshd", "ropespec.implementations.numpy_layout:bshd", CallShape(layout="bshd"), "numpy", "float32", None),
    ("apply-bhsd", "ropespec.implementations.numpy_layout:bhsd", CallShape(layout="bhsd"), "numpy", "float32", None),
    ("apply-sbhd", "ropespec.implementations.numpy_layout:sbhd", CallShape(layout="sbhd"), "numpy", "float32", None),
    ("apply-thd", "ropespec.implementations.numpy_layout:thd", CallShape(layout="thd"), "numpy", "float32", None),
    ("apply-thd-per-token", "ropespec.implementations.numpy_layout:thd_per_token",
     CallShape(layout="thd", positions="per-token"), "numpy", "float32", None),
    ("vllm", "ropespec.implementations.numpy_layout:vllm", CallShape(form="vllm"), "numpy", "float32", None),
    ("decoder", "ropespec.implementations.numpy_decode:make", CallShape(), "numpy", "float64", None),
    ("table", "ropespec.implementations.numpy_table:make", CallShape(form="table"), "numpy", "float32", None),
    ("kernel", "ropespec.implementations.numpy_kernel:make", CallShape(form="kernel"), "numpy", "float32", None),
    ("qk", "ropespec.implementations.numpy_qk:make", CallShape(form="qk"), "numpy", "float32", None),
    ("complex-bshd", "ropespec.implementations.numpy_complex:make", CallShape(form="complex", layout="bshd"), "numpy",
     "float32", None),
    ("complex-bhsd", "ropespec.implementations.numpy_complex:heads_first", CallShape(form="complex", layout="bhsd"),
     "numpy", "float32", None),
    ("sinusoidal", "ropespec.implementations.sinusoidal:make", CallShape(family="sinusoidal"), "numpy", "float64", None),
    ("learned", "ropespec.implementations.learned:make", CallShape(family="learned"), "numpy", "float64", None),
    ("attention", "ropespec.implementations.attention:make", CallShape(family="attention"), "numpy", "float64", None),
    ("attention-decoder", "ropespec.implementations.attention_decode:make", CallShape(family="attention"), "numpy", "float64",
     None),
    ("position-ids", "ropespec.implementations.numpy_positions:make", CallShape(family="position-ids"), "numpy", "float64",
     None),
    ("alibi", "ropespec.implementations.biases:alibi", CallShape(family="alibi"), "numpy", "float64", None),
    ("alibi-bhqk", "ropespec.implementations.biases:alibi", CallShape(family="alibi", layout="bhqk"), "numpy", "float64", None),
    ("t5-bucket", "ropespec.implementations.biases:t5_bucket", CallShape(family="t5-bias"), "numpy", "float64", None),
    ("t5-lookup", "ropespec.implementations.biases:t5_lookup", CallShape(family="t5-bias"), "numpy", "float64", None),
    ("xpos", "ropespec.implementations.biases:xpos", CallShape(family="xpos"), "numpy", "float64", None),
    ("model", "ropespec.implementations.numpy_model:make", CallShape(family="model"), "numpy", "float64", None),
]
#: what hands over no position the domain rule bounds: a kernel is handed its table, a position-id builder its tokens, T5's
#: bucket function relative positions (every integer is its domain) and a learned table's lookups are not declared (its
#: bounds invariant asks past max_len on purpose)
NO_POSITIONS = ("kernel", "qk", "complex-bshd", "complex-bhsd", "position-ids", "t5-bucket", "learned")
#: small enough that drawn positions meet both ends of the domain often
MAX_POSITION = 48


def test_every_form_layout_and_decoder_is_covered():
    covered = {(s.family, s.checked_as[1], s.layout) for _, _, s, *_ in COVER}
    wanted = {(f.family, f.name, layout) for f in REGISTRY.values() for layout in f.layouts}
    assert wanted <= covered, sorted(wanted - covered)
    assert {"decoder", "attention-decoder"} <= {name for name, *_ in COVER}


def _outside(expect: Expect, p: np.ndarray) -> str | None:
    return expect.outside_domain(p)


@pytest.mark.parametrize("name, target, shape, array, dtype, expect", COVER, ids=[c[0] for c in COVER])
def test_no_property_hands_over_a_position_outside_the_domain(monkeypatch, name, target, shape, array, dtype, expect):
    seen: dict[str, int] = {}
    outside: list[str] = []
    running = {"prop": None}
    real = base.handed_positions

    def recording(bound, op, args):
        got = real(bound, op, args)
        for p in got:
            seen[running["prop"]] = seen.get(running["prop"], 0) + p.size
            said = _outside(bound.expect, p)
            if said:
                outside.append(f"{running['prop']}: {op} with {said}")
        return []  # recorded here; the guard is tested on its own below

    monkeypatch.setattr(base, "handed_positions", recording)
    e = None if expect is None else Expect.from_dict({**expect, "max_position": MAX_POSITION, "dtype": dtype})
    [impl] = load_implementations([target], expect=e, array=array, dtype=dtype, max_position=MAX_POSITION,
                                  shape=shape)
    ran = []
    try:
        for prop in all_properties():
            running["prop"] = prop.name
            result = run_property(prop, impl, profile="dev", seed_value=1)
            if result.status not in ("skip",):
                ran.append(prop.name)
            assert result.status != "error", result.message
    finally:
        impl.close()
    assert ran, "no property ran"
    assert not outside, outside[:10]



#: the invariant whose property makes each form's long calls (ropespec.properties.cases.TILE_LENGTHS); the decoders grow their
#: calls step by step to thousands of tokens (decode.consistency), the position-id builders take token lists
LONG = {"apply-nd": "rope.conformance", "apply-nd-pinned-axes": "rope.conformance", "apply-bshd": "rope.layout",
        "apply-bhsd": "rope.layout", "apply-sbhd": "rope.layout", "apply-thd": "rope.layout",
        "apply-thd-per-token": "rope.layout", "vllm": "rope.layout", "table": "table.angles",
        "kernel": "kernel.rotation", "qk": "kernel.qk", "complex-bshd": "kernel.qk", "complex-bhsd": "kernel.qk",
        "sinusoidal": "sinusoidal.conformance",
        "learned": "learned.in-range", "attention": "attention.shift-invariance", "alibi": "alibi.softmax-rows",
        "alibi-bhqk": "alibi.softmax-rows", "t5-bucket": "t5-bias.conformance", "t5-lookup": "t5-bias.lookup",
        "xpos": "xpos.conformance"}
#: the forms whose calls carry heads: a call of more than 8 of them is made
HEADED = ("apply-bshd", "apply-bhsd", "apply-sbhd", "apply-thd", "apply-thd-per-token", "vllm", "qk", "complex-bshd",
          "complex-bhsd", "attention",
          "alibi", "alibi-bhqk", "t5-lookup")


def _size(bound, op, args) -> tuple[int, int]:
    """(rows, heads) of one call: the most rows (tokens, keys) of any array handed over, every axis but the last;
    the heads, where the call has them."""
    arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray)]
    rows = max((int(np.prod(a.shape[:-1])) if a.ndim >= 2 else len(a) for a in arrays if a.size), default=0)
    family, heads = bound.host.shape.family, 0
    if op in ("layout", "grad") and args[0].ndim >= 3:
        heads = args[0].shape[-2]
    elif op in ("qk", "qk_grad"):
        heads = args[0].shape[1]
    elif family == "alibi" and op in ("bias", "batch"):
        heads = int(args[0])
    elif family == "t5-bias" and op == "lookup":
        heads = args[0].shape[1]
    elif family == "attention" and op == "attend":
        heads = bound.expect.n_heads
    return rows, heads


@pytest.mark.parametrize("name", list(LONG))
def test_every_form_is_called_across_the_tile_sizes(monkeypatch, name):
    """At the default max_position, every form's own property makes calls longer than 256 rows (tokens, keys) that are
    no multiple of 64, in every profile (pinned cases), and more heads than 8 where the form has heads: a RoPE right
    for the first 128 rows of a call passed every property when no call had more than 64 rows."""
    _, target, shape, array, dtype, expect = next(c for c in COVER if c[0] == name)
    calls: list[tuple[int, int]] = []
    real = base.handed_positions

    def recording(bound, op, args):
        calls.append(_size(bound, op, args))
        return real(bound, op, args)

    monkeypatch.setattr(base, "handed_positions", recording)
    e = None if expect is None else Expect.from_dict({**expect, "dtype": dtype})
    [impl] = load_implementations([target], expect=e, array=array, dtype=dtype, shape=shape)
    try:
        results = [run_property(p, impl, profile="dev", seed_value=1) for p in all_properties()
                   if p.invariant == LONG[name]]
    finally:
        impl.close()
    assert results and all(r.status == "pass" for r in results), [(r.status, r.message[:200]) for r in results]
    rows = [r for r, _ in calls]
    assert max(rows) >= 257 and any(r > 128 and r % 64 for r in rows), sorted(set(rows))[-8:]
    if name.startswith("apply-nd"):
        assert max(rows) > 4096, "the longest of TILE_LENGTHS crosses 4096"
    if name in HEADED:
        assert max(h for _, h in calls) > 8, "no call with more heads than one tile of 8"


def test_the_guard_refuses_a_call_outside_the_domain_as_an_error_of_ropespecs():
    """A call outside the domain is never made: the property is an error of the suite, naming the position."""
    from ropespec.properties.framework import rope_property, PROPERTIES

    @rope_property("rope.conformance", cases=lambda impl: __import__("hypothesis").strategies.just(None))
    def test_domain_probe(bind, case):
        f = bind(Expect(head_dim=4, max_position=MAX_POSITION, angle_dtype="exact", inv_freq_dtype="exact"))
        f(np.ones((2, 4)), np.array([0, -1]))
        return 0.0

    prop = PROPERTIES.pop("domain_probe")
    [impl] = load_implementations(["ropespec.implementations.numpy_rope:make"], dtype="float64", max_position=MAX_POSITION)
    try:
        result = run_property(prop, impl, seed_value=0)
    finally:
        impl.close()
    assert result.status == "error", result
    assert "position -1, outside [0, 48)" in result.message and "not of the implementation" in result.message


AXES = '{"head_dim": 24, "axes_dims_rope": [4, 8, 12], "convention": "interleaved"}'


@pytest.mark.parametrize("argv", [
    ["fingerprint", "ropespec.implementations.numpy_rope:make", "--dtype", "float64"],
    ["fingerprint", "ropespec.implementations.numpy_rope:make", "--dtype", "float64", "--expect", AXES],
    ["precision", "ropespec.implementations.numpy_rope:make", "--dtype", "float32"],
    ["precision", "ropespec.implementations.numpy_rope:make", "--dtype", "float32", "--expect", AXES],
    ["precision", "ropespec.implementations.numpy_rope:make", "--dtype", "float32", "--exhaustive"],
], ids=["fingerprint", "fingerprint-axes", "precision", "precision-axes", "precision-exhaustive"])
def test_the_fingerprint_and_the_precision_sweep_stay_inside_the_domain(monkeypatch, capsys, argv):
    from ropespec.cli import main

    outside, seen = [], []
    real = base.handed_positions

    def recording(bound, op, args):
        got = real(bound, op, args)
        seen.extend(got)
        outside.extend(filter(None, (bound.expect.outside_domain(p) for p in got)))
        return got

    monkeypatch.setattr(base, "handed_positions", recording)
    code = main(argv + ["--max-position", str(MAX_POSITION + 1)])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert seen and not outside, outside[:5]


AXIAL = '''
import numpy as np

M = 64  # the grid's side: SAM2's compute_axial_cis builds one row per patch of the M x M grid, and nothing else


def _grid(dim, theta=10000.0):
    freqs = 1.0 / theta ** (np.arange(0, dim, 4)[: dim // 4] / dim)
    t = np.arange(M * M)
    x, y = t % M, t // M  # patch t at column t mod M, row t // M
    return np.concatenate([np.outer(x, freqs), np.outer(y, freqs)], axis=1)  # (M * M, dim / 2)


TABLE = _grid(16)


def apply(x, positions):
    """2-D axial RoPE read from the grid's table at row y M + x (a position -1 reads another patch's row)."""
    ang = TABLE[positions[:, 1] * M + positions[:, 0]]
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x, dtype=np.float64)
    out[:, 0::2] = a * np.cos(ang) - b * np.sin(ang)
    out[:, 1::2] = a * np.sin(ang) + b * np.cos(ang)
    return out.astype(x.dtype)
'''


def test_table_based_vision_rope_holds_axis_separation(tmp_path):
    """A correct table-based axial RoPE (SAM2's, timm's and CogVideoX's kind: one table row per patch of the grid)
    holds every invariant, axes.separation included: its pinned rows sit at 0 and max_position - 1 on every axis, where
    a move of -1 read another patch's row."""
    from ropespec import check

    p = tmp_path / "axial.py"
    p.write_text(AXIAL)
    result = check(f"{p}:apply", {"head_dim": 16, "axes_dims_rope": [8, 8], "convention": "interleaved",
                                  "max_position": 64}, seed=0)
    assert result.passed, result.report()
    assert any(r.invariant == "axes.separation" and r.status == "pass" for r in result.results)
