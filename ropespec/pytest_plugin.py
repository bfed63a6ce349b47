"""The ropespec pytest plugin (registered through the ``pytest11`` entry point).

Options, in one ``ropespec`` group: ``--rope-impl TARGET`` (repeatable; env ``ROPESPEC_IMPL``,
comma-separated), ``--rope-expect`` (repeatable, and globs of config.json files), ``--rope-array``, ``--rope-dtype``
and ``--rope-layout`` (comma-separated lists), ``--rope-max-position``, ``--rope-timeout``, ``--rope-warmup-timeout``,
``--rope-memory-limit``. Each implementation runs in its own worker process, as with ``ropespec check``. Without
``--rope-impl`` the shipped implementations are under test. Every test that takes the ``rope_impl`` fixture runs once
per impl, with ids like ``[numpy-float32]``; a configuration matrix (several expectations, dtypes or layouts, as
``ropespec check`` takes them) is one id per combination, ``[llama3.1-8b-bfloat16-bshd]`` (prefixed by the TARGET's
name when there are several), so pytest-xdist spreads it too.
``--rope-profile dev|ci|thorough`` chooses the profile of ropespec's properties and of ``rope_check``
(default: dev, ci when ``CI`` is set); the plugin changes no other test's Hypothesis settings.

Every import of ropespec's own modules is inside the hook or fixture that needs it: the plugin is loaded by every
pytest run of an environment where ropespec is installed, and one that uses none of it pays nothing for it.
"""

from __future__ import annotations

import contextlib
import os
import re

import pytest

_KEY = pytest.StashKey[list]()
_REQUEST_KEY = pytest.StashKey[object]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The --rope-* options: the check request's fields marked for pytest (:class:`ropespec.request.CheckRequest`), each
    with its help there, and the profile's choices."""
    from dataclasses import fields

    from ropespec.request import CheckRequest

    group = parser.getgroup("ropespec", "ropespec: the RoPE implementations under test")
    for f in fields(CheckRequest):
        flag = f.metadata.get("flag")
        if flag is None or flag.pytest is None:
            continue
        kwargs = {k: v for k, v in flag.arguments().items() if k in ("metavar", "choices", "type", "action")}
        if kwargs.get("action") in (None, "append") and f.name == "targets":
            kwargs.update(action="append", metavar="TARGET")
        kwargs.setdefault("default", [] if kwargs.get("action") == "append" else
                          False if kwargs.get("action") == "store_true" else None)
        group.addoption(flag.pytest, help=flag.pytest_help or flag.help, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    """Choose the profile of ropespec's own properties; no other test's Hypothesis settings change."""
    from ropespec.properties import profiles

    profiles.set_active(_request(config).profile)
    _configurations(config)  # bad usage is said before anything runs (exit 4, one line)


@contextlib.contextmanager
def _usage_errors():
    """A bad --rope-* option as pytest's usage error: one line, exit 4."""
    from ropespec.inputs import UsageError
    from ropespec.spec.expectation import ExpectationError

    try:
        yield
    except ExpectationError as e:
        raise pytest.UsageError(f"--rope-expect: {e}") from None
    except UsageError as e:  # said with this plugin's option names
        raise pytest.UsageError(re.sub(r"^--(expect|dtype|layout):", r"--rope-\1:", str(e))) from None


def _request(config: pytest.Config):
    """The check request of the --rope-* options (:meth:`ropespec.request.CheckRequest.from_pytest`), built once."""
    if _REQUEST_KEY not in config.stash:
        from ropespec.request import CheckRequest

        with _usage_errors():
            config.stash[_REQUEST_KEY] = CheckRequest.from_pytest(config)
    return config.stash[_REQUEST_KEY]


def _configurations(config: pytest.Config) -> list:
    """The matrix of --rope-expect, --rope-dtype and --rope-layout (one combination without lists)."""
    with _usage_errors():
        return _request(config).configurations()


def _implementations(config: pytest.Config) -> list:
    if _KEY not in config.stash:
        from ropespec.inputs import load_all

        with _usage_errors():
            config.stash[_KEY] = load_all(_request(config).load_requests(_configurations(config)))
    return config.stash[_KEY]


def _test_id(impl, single_target: bool) -> str:
    """An implementation's test id: its name; in a matrix its combination, after the TARGET's name unless there is
    one TARGET (``[llama3.1-8b-bfloat16-bshd]``)."""
    from ropespec.matrix import config_tag

    if impl.configuration is None:
        return impl.name
    tag = config_tag(impl.configuration)
    return tag if single_target else f"{impl.name.removesuffix(f'[{tag}]')}-{tag}"


def pytest_report_collectionfinish(config: pytest.Config, items: list) -> list[str]:
    """What ropespec's properties test in this run, after collection: nothing when the run collected
    none of them (an unrelated project's tests, or only rope_check tests, which name what they check)."""
    if not any("rope_impl" in getattr(item, "fixturenames", ()) for item in items):
        return []
    from ropespec.properties import profiles

    lines = [f"ropespec: profile {profiles.active()!r}; under test:"]
    lines += [f"  {s.describe()}" + (f" [skipped: {s.skip_reason}]" if s.skip_reason else "") for s in _implementations(config)]
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rope_impl" in metafunc.fixturenames:
        impls = _implementations(metafunc.config)
        prop = getattr(metafunc.function, "property", None)
        if prop is not None:  # only the implementations the invariant is about (its form, in its mode)
            impls = [s for s in impls if s.answers(prop.invariant) or s.skip_reason]
        single = len({s.target for s in _implementations(metafunc.config)}) == 1
        metafunc.parametrize("rope_impl", impls, ids=[_test_id(s, single) for s in impls])


@pytest.fixture
def rope_replay():
    """How a failing property of ``pytest properties`` says to replay it: ``rope_replay(impl, result)``."""
    from ropespec.replay import replay_text

    return replay_text


def as_arguments(text: str) -> str:
    """A command line's words in rope_check's: "--array torch" is array="torch", "--allow-skip" allow_skip=True."""
    text = re.sub(r"--(allow-skip|inplace)\b", lambda m: f'{m[1].replace("-", "_")}=True', text)
    return re.sub(r"--([a-z][a-z-]*) ([\w.:-]+)", lambda m: f'{m[1].replace("-", "_")}="{m[2]}"', text)


@pytest.fixture
def rope_check(request):
    """Check an implementation inside a test; fails the test with the full report (every failing
    invariant, its diagnosis and a replay command), and fails it too when nothing could be checked
    (``allow_skip=True``: skips it instead). The implementation runs in a worker process when its module
    can be imported there, in-process otherwise (see :func:`ropespec.check`). Same arguments as
    :func:`ropespec.check`::

        def test_my_kernel(rope_check):
            rope_check(my_kernel, expect="llama3.1-8b", array="torch")
    """
    from ropespec.properties import profiles
    from ropespec.api import check

    def run(fn, expect=None, **kwargs):
        kwargs.setdefault("profile", profiles.active())
        result = check(fn, expect, **kwargs)
        if not result.held:  # the first line, which pytest's short summary shows, is the fault and its invariant
            pytest.fail(f"{result.headline()}\n{result.report()}", pytrace=False)
        if result.unchecked:  # nothing ran: never a pass; a skip only when the test says it may be
            why = as_arguments("; ".join(result.nothing_checked()))
            if kwargs.get("allow_skip"):  # reported at the user's test, not here
                raise pytest.skip.Exception(why, _use_item_location=True)
            pytest.fail(f"{why} (rope_check(..., allow_skip=True) makes this a skip)", pytrace=False)
        return result

    return run
