"""The perturbation grid: the measure of how well a failure is named. Each cell is an implementation that computes an
expectation with one field perturbed (its base, a scaling parameter, a known mistake of the method, the rotary dim, the
convention, the direction, an axis's offset, the sections, ...), checked under the expectation itself: the word its
failures carry must be the perturbed field's (:data:`WORDS`), and ``ropespec fingerprint`` must read the same values.

The implementations are the shipped numpy RoPE (exact angles) built for the perturbed expectation, or, for a mistake no
expectation can state (a ramp reversed, band factors swapped, a turn the other way), the same rotation with its
frequency table or angle bent: so a cell's only fault is its perturbation. ``tests/test_grid.py`` checks a sample in
every run; ``benchmarks/perturbation_grid.py`` the whole grid, whose named fraction README quotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ropespec import reference
from ropespec.implementations import load_implementation, numpy_rope
from ropespec.properties.diagnose import scaling_variants
from ropespec.properties.framework import all_properties, run_property
from ropespec.spec.angles import cos_sin
from ropespec.spec.expectation import Expect

_EXACT = {"angle_dtype": "exact", "inv_freq_dtype": "exact"}


@dataclass(frozen=True)
class Cell:
    """One implementation of the grid: ``expect`` is what it is checked under, ``make()`` builds the function,
    ``field`` is what was perturbed and ``word`` the diagnosis that names it."""

    base: str
    field: str
    word: str
    expect: Expect
    make: Callable[[], Callable]
    #: the expectation the function computes, where one states it (None: a mistake no expectation states)
    computes: Expect | None = None

    @property
    def name(self) -> str:
        return f"{self.base}/{self.field}"


#: the expectations perturbed: each method of length scaling, both pairings, partial rotary, every multi-axis kind
BASES: dict[str, dict] = {
    "default-half": {"head_dim": 64, "rope_theta": 10000.0},
    "default-interleaved-partial": {"head_dim": 64, "rotary_dim": 32, "rope_theta": 500000.0,
                                    "convention": "interleaved"},
    "linear": {"head_dim": 64, "rope_theta": 10000.0, "max_position": 32768,
               "rope_scaling": {"rope_type": "linear", "factor": 4.0}},
    "dynamic": {"head_dim": 64, "rope_theta": 10000.0, "max_position": 16384,
                "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}},
    "yarn-deepseek": {"head_dim": 64, "rope_theta": 10000.0, "convention": "rope_interleave", "max_position": 65536,
                      "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096,
                                       "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}},
    "yarn": {"head_dim": 64, "rope_theta": 10000.0, "max_position": 32768,
             "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}},
    "llama3": {"head_dim": 128, "rope_theta": 500000.0, "max_position": 131072,
               "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 8192}},
    "chunked": {"head_dim": 32, "rope_theta": 1000000.0, "mrope_section": [4, 6, 6], "max_position": 32768},
    "interleaved-axes": {"head_dim": 32, "rope_theta": 5000000.0, "mrope_section": [6, 5, 5], "mrope_interleaved": True,
                         "max_position": 32768},
    "per-axis": {"head_dim": 48, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [8, 20, 20],
                 "max_position": 4096},
}

#: the word each perturbed field must be named by
WORDS = {"base x 1.001": "base", "base x 0.999": "base", "base x 5": "base", "factor x 2": "scaling",
         "original length x 2": "scaling", "truncate": "scaling", "ramp reversed": "scaling",
         "bands swapped": "scaling", "attention factor": "attention-factor", "rotary dim": "rotary-dim",
         "convention": "convention", "direction": "direction", "position offset": "position-offset",
         "axis offset": "axis-offset", "sections permuted": "axes-sections"}


def _numpy(e: Expect) -> Callable[[], Callable]:
    make = lambda: numpy_rope.make(e.replace(**_EXACT))  # noqa: E731
    make.computes = e
    return make


def _table(e: Expect, thetas: np.ndarray, sign: float = 1.0) -> Callable[[], Callable]:
    """The rotation of ``e``'s pairs by sign p thetas (exact angles): a frequency table no expectation states."""
    hi, lo = np.asarray(thetas, dtype=np.float64), np.zeros(len(thetas))
    a, b = (np.array(ix) for ix in zip(*e.pairs()))
    oa, ob = (np.array(ix) for ix in zip(*e.out_pairs()))
    g = reference.attention_factor(e)

    def make():
        def rope(x, positions):
            xf = np.asarray(x, dtype=np.float64)
            c, s = cos_sin(e.pair_positions(np.asarray(positions, dtype=np.float64)), hi, lo)
            c, s = g * c, sign * g * s
            out = xf.copy()
            out[:, oa], out[:, ob] = xf[:, a] * c - xf[:, b] * s, xf[:, a] * s + xf[:, b] * c
            return out.astype(e.dtype)

        return rope

    return make


#: the scaling methods' mistakes (:meth:`ropespec.spec.methods.ScalingMethod.mistakes`' tags) perturbed, by that tag
_MISTAKES = ("ramp reversed", "bands swapped", "truncate")


def _perturbations(e: Expect):
    """(field, the function's maker) for every perturbation that applies to ``e``."""
    yield "base x 1.001", _numpy(e.replace(rope_theta=e.rope_theta * 1.001))
    yield "base x 0.999", _numpy(e.replace(rope_theta=e.rope_theta * 0.999))
    yield "base x 5", _numpy(e.replace(rope_theta=e.rope_theta * 5))
    yield "direction", _table(e, reference.thetas(e), sign=-1.0)
    other = {"half": "interleaved", "interleaved": "half", "rope_interleave": "half"}[e.convention]
    yield "convention", _numpy(e.replace(convention=other))
    if not e.multi_axis and e.rotary_dim > 2:
        yield "rotary dim", _numpy(e.replace(rotary_dim=e.rotary_dim - 2, partial_rotary_factor=None))
    s = e.to_dict()["rope_scaling"] or {}
    if e.method.scales:
        yield "factor x 2", _numpy(e.replace(rope_scaling={**s, "factor": s["factor"] * 2}))
        if "original_max_position_embeddings" in s:
            yield "original length x 2", _numpy(e.replace(rope_scaling={
                **s, "original_max_position_embeddings": s["original_max_position_embeddings"] * 2}))
        for tag, _, tv in scaling_variants(e, None):
            if tag in _MISTAKES:
                yield tag, _table(e, tv)
    if _applies(e, "attention factor"):
        yield "attention factor", _numpy(e.replace(rope_scaling={**s, "attention_factor": 1.5}))
    if e.multi_axis:
        offset = [0] * e.n_axes
        offset[-1] = 1
        yield "axis offset", _numpy(e.replace(axes_offset=offset))
        if e.mrope_section is not None and len(set(e.mrope_section)) > 1:
            try:
                yield "sections permuted", _numpy(e.replace(mrope_section=list(reversed(e.mrope_section))))
            except ValueError:  # reversed, the interleaved sections end past the pairs: no such expectation
                pass
    else:
        yield "position offset", lambda: (lambda f: (lambda x, p: f(x, np.asarray(p) + 1)))(_numpy(e)())


#: the pairs of fields perturbed together: two fields of the expectation, or one with the direction or a position
#: offset (a mistake no expectation states); both words must be named, the root's first and the other after it
PAIRS = (("base x 5", "convention"), ("base x 5", "rotary dim"), ("base x 5", "factor x 2"),
         ("convention", "factor x 2"), ("rotary dim", "factor x 2"), ("base x 5", "attention factor"),
         ("base x 5", "axis offset"), ("convention", "axis offset"), ("base x 5", "direction"),
         ("factor x 2", "direction"), ("convention", "direction"), ("base x 5", "position offset"),
         ("convention", "position offset"), ("factor x 2", "position offset"), ("direction", "position offset"))

#: the fields an expectation states, as the change each makes to it
_FIELDS: dict[str, Callable[[Expect], Expect]] = {
    "base x 5": lambda e: e.replace(rope_theta=e.rope_theta * 5),
    "convention": lambda e: e.replace(convention={"half": "interleaved", "interleaved": "half",
                                                  "rope_interleave": "half"}[e.convention]),
    "rotary dim": lambda e: e.replace(rotary_dim=e.rotary_dim - 2, partial_rotary_factor=None),
    "factor x 2": lambda e: e.replace(rope_scaling={**e.to_dict()["rope_scaling"],
                                                    "factor": e.rope_scaling["factor"] * 2}),
    "attention factor": lambda e: e.replace(rope_scaling={**e.to_dict()["rope_scaling"], "attention_factor": 1.5}),
    "axis offset": lambda e: e.replace(axes_offset=[0] * (e.n_axes - 1) + [1]),
}


def _applies(e: Expect, field: str) -> bool:
    return {"rotary dim": not e.multi_axis and e.rotary_dim > 2, "factor x 2": e.method.scales,
            "attention factor": "attention_factor" in e.method.keys,
            "axis offset": e.multi_axis,
            "position offset": not e.multi_axis}.get(field, True)


def pair_cells() -> list[Cell]:
    """Every pair of :data:`PAIRS` that applies to a base expectation: ``field`` "a + b", ``word`` "wa + wb"."""
    out = []
    for name, d in BASES.items():
        e = Expect.from_dict({**d, "dtype": "float32"})
        for a, b in PAIRS:
            if not (_applies(e, a) and _applies(e, b)):
                continue
            stated = [x for x in (a, b) if x in _FIELDS]
            try:
                computes = e
                for x in stated:
                    computes = _FIELDS[x](computes)
            except (ValueError, KeyError, TypeError):
                continue
            make = _table(computes, reference.thetas(computes), sign=-1.0) if "direction" in (a, b) else \
                _numpy(computes)
            if "position offset" in (a, b):
                make = (lambda m: lambda: (lambda f: (lambda x, p: f(x, np.asarray(p) + 1)))(m()))(make)
            out.append(Cell(name, f"{a} + {b}", f"{WORDS[a]} + {WORDS[b]}", e, make,
                            computes if len(stated) == 2 else None))
    return out


def _first_failure(cell: Cell, seed: int):
    """The cell's first failing conformance property, run as ``ropespec check --invariant rope.conformance`` runs it
    (a Result), or None when every one passes."""
    impl = load_implementation(cell.make(), expect=cell.expect, name=cell.name, isolate=False)
    try:
        for prop in all_properties():
            if prop.invariant == "rope.conformance":
                r = run_property(prop, impl, seed_value=seed)
                if r.status == "fail":
                    return r
    finally:
        impl.close()
    return None


def named_pair(cell: Cell, seed: int = 0) -> bool:
    """Whether the pair cell's failure names both fields: its word is one of the two, and the other is among the
    other fields' words it carries (Failure.also)."""
    words = cell.word.split(" + ")
    r = _first_failure(cell, seed)
    return r is not None and r.failure is not None and r.diagnosis in words and all(
        w in r.failure.also for w in words if w != r.diagnosis)


def named(cell: Cell, seed: int = 0) -> str | None:
    """The word the cell's failure carries: the diagnosis of its first failing conformance property (None when every
    one passes)."""
    r = _first_failure(cell, seed)
    return None if r is None else r.diagnosis


def cells() -> list[Cell]:
    """Every cell of the grid: each base expectation with each perturbation that applies to it."""
    out = []
    for name, d in BASES.items():
        e = Expect.from_dict({**d, "dtype": "float32"})
        for field, make in _perturbations(e):
            out.append(Cell(name, field, WORDS[field], e, make, getattr(make, "computes", None)))
    return out
