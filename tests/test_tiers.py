"""README's `pytest` (the fast tier) keeps a test of every invariant, family, form and fault word: the tiers by time
(conftest.py's SLOW_S over tests/durations.json) move only tests of which the fast tier keeps another, and never the
fast tier's coverage (FAST_ALWAYS): each zoo member failing each invariant it targets with its word, every form's domain
record, every proof and its mutations."""

from __future__ import annotations

import pytest

from ropespec.implementations.families.base import REGISTRY
from ropespec.implementations.zoo import members


@pytest.fixture
def fast_tier(request) -> set[str]:
    """The node ids of this run, where it is README's whole `pytest` (the fast tier, every file)."""
    config = request.config
    if ((config.getoption("markexpr") or "").replace(" ", "") != "notslow" or config.getoption("keyword")
            or config.args_source == config.ArgsSource.ARGS):
        pytest.skip("about README's whole `pytest`: run without paths, -k or -m")
    return {item.nodeid for item in request.session.items}


def test_every_zoo_member_fails_its_invariants_in_the_fast_tier(fast_tier):
    wanted = {f"tests/test_zoo.py::test_zoo_member_fails_its_target[{m.name}-{inv}]" for m in members()
              for inv in m.targets}
    assert wanted <= fast_tier, sorted(wanted - fast_tier)[:10]


def test_every_family_and_form_has_a_domain_record_in_the_fast_tier(fast_tier):
    """Each registered (family, form) is handed positions in the fast tier (its other layouts may be slow: a layout is
    another axis order of the same positions)."""
    from tests.test_domain import COVER  # the records, with what each is called as

    fast = {name for name, *_ in COVER
            if f"tests/test_domain.py::test_no_property_hands_over_a_position_outside_the_domain[{name}]" in fast_tier}
    covered = {(s.family, s.checked_as[1]) for name, _, s, *_ in COVER if name in fast}
    wanted = {(f.family, f.name) for f in REGISTRY.values()}
    assert wanted <= covered, sorted(wanted - covered)

