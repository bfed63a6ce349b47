"""Run control for this repository's own test run.

The options (--rope-impl, --rope-expect, --rope-array, --rope-dtype, --rope-max-position), the
impl parametrisation and the report header live in the ropespec pytest plugin
(ropespec/pytest_plugin.py), which pytest loads through its pytest11 entry point wherever ropespec
is installed: this repository and a user's test suite share one code path.
"""

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """A plain ``pytest`` of the whole repository uses every core (2 on the project's machines) when
    pytest-xdist is installed; ``-n 0`` runs serially, and any explicit path or ``-n N`` is left alone."""
    opt = config.option
    if (getattr(opt, "numprocesses", "absent") is None and not config.args_source == config.ArgsSource.ARGS
            and not os.environ.get("PYTEST_XDIST_WORKER") and (os.cpu_count() or 1) > 1):
        opt.numprocesses = min(os.cpu_count(), 2)
        if getattr(opt, "dist", "no") == "no":
            opt.dist = "load"


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("ropespec"):
        raise pytest.UsageError("the ropespec plugin is not loaded: install the project first (pip install -e .)")
    # this repository's own Hypothesis tests use ropespec's profile too (the plugin changes no one's settings)
    if not config.getoption("hypothesis_profile", None):
        from hypothesis import settings

        from properties import profiles

        settings.load_profile(profiles.hypothesis_name(config.getoption("rope_profile", None) or profiles.active()))


#: the longest tests (README's `ropespec check` of every shipped implementation, the transformers runs): started
#: first, so that two workers do not end with one of them alone on a half-minute test
_FIRST = ("tests/test_readme.py::test_readme_command[ropespec check]",
          "tests/test_readme.py::test_readme_command[ropespec check implementations.adapters.hf",
          "tests/test_examples.py::test_transformers_example", "tests/test_isolation.py::test_nasty_implementations")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(_FIRST))


@pytest.fixture(autouse=True)
def _signal_handlers_kept():
    """A test leaves SIGINT's and SIGTERM's handlers as it found them (a leaked SIG_IGN makes a later test's
    interrupt vanish): one that does not fails, naming them, and the handlers are put back."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    after = {s: signal.getsignal(s) for s in before}
    changed = {s.name: (before[s], after[s]) for s in before if after[s] is not before[s]}
    for s, handler in before.items():
        signal.signal(s, handler)
    assert not changed, f"the test left signal handlers changed: {changed}"
