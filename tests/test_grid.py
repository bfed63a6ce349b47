"""The perturbation grid (properties/perturbations.py): every cell, an implementation with one field of its expectation
perturbed, is named by that field's word, at several seeds; and the fingerprint reads the perturbed values where a
field of the expectation states them. benchmarks/perturbation_grid.py runs the same grid and records the named
fraction README quotes."""

from __future__ import annotations

import pytest

from ropespec.properties.perturbations import cells, named, named_pair, pair_cells

CELLS = cells()
PAIRS = pair_cells()


@pytest.mark.parametrize("cell", CELLS, ids=[c.name for c in CELLS])
def test_each_perturbation_gets_its_fields_word(cell):
    assert named(cell) == cell.word


#: the pairs the benchmark records as not named both (benchmarks/perturbation_grid.json's pairs_misnamed)
NOT_NAMED = {"dynamic/base x 5 + factor x 2", "dynamic/factor x 2 + direction", "dynamic/factor x 2 + position offset"}


@pytest.mark.parametrize("cell", [c for c in PAIRS if c.name not in NOT_NAMED][::3], ids=lambda c: c.name)
def test_a_pair_of_perturbations_names_both_fields(cell):
    """A third of the pairs the grid names (every one, at three seeds, in benchmarks/perturbation_grid.py): one field's
    word, and the other said after it."""
    assert named_pair(cell)


def test_the_pairs_not_named_are_the_recorded_ones():
    import json
    from pathlib import Path

    record = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "perturbation_grid.json").read_text())
    assert set(record["pairs_misnamed"]) == NOT_NAMED and record["pairs"] == len(PAIRS)


def test_the_word_does_not_depend_on_the_seed():
    """Every word is seed-independent: a quarter of the grid at two more seeds."""
    moved = [(c.name, w) for c in CELLS[::4] for w in {named(c, seed=s) for s in (1, 2)} if w != c.word]
    assert not moved, moved


@pytest.mark.parametrize("cell", [c for c in CELLS if c.computes is not None and not c.expect.multi_axis
                                  and c.field in ("base x 5", "convention", "rotary dim", "factor x 2")],
                         ids=lambda c: c.name)
def test_check_and_fingerprint_agree_on_the_perturbed_field(cell):
    """What check names, the fingerprint measures: the base, the convention, the rotary dim, the factor it reads are
    the perturbed expectation's."""
    from ropespec.properties.fingerprint import fingerprint

    fp = fingerprint(cell.make(), cell.expect)
    want = cell.computes
    got = {"base x 5": fp.base, "convention": fp.convention, "rotary dim": fp.rotary_dim,
           "factor x 2": (fp.scaling or {}).get("factor")}[cell.field]
    expected = {"base x 5": want.rope_theta, "convention": want.convention, "rotary dim": want.rotary_dim,
                "factor x 2": (want.to_dict()["rope_scaling"] or {}).get("factor")}[cell.field]
    assert got == pytest.approx(expected, rel=1e-6) if isinstance(expected, float) else got == expected, (got, expected)


def test_readme_quotes_the_grids_last_recorded_figure():
    """README's figure is the one benchmarks/perturbation_grid.py last recorded, with its date."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    record = json.loads((root / "benchmarks" / "perturbation_grid.json").read_text())
    from tests import docs_text

    readme = docs_text.TEXT  # README and the site's pages
    m = re.search(r"`python benchmarks/perturbation_grid.py` \((\S+), [^)]*\): perturbation grid: (\d+) of (\d+) single "
                  r"perturbations named at seeds 0, 1 and 2 \([\d.]+%\), (\d+) of (\d+) pairs", readme)
    assert m and (m[1], int(m[2]), int(m[3]), int(m[4]), int(m[5])) == (
        record["date"], record["named"], record["singles"], record["pairs_named"], record["pairs"]), m
    assert record["singles"] == len(CELLS), "the grid changed since it was recorded: rerun the script"
