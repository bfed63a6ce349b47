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
_CONFIGURATIONS_KEY = pytest.StashKey[object]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ropespec", "ropespec: the RoPE implementations under test")
    group.addoption("--rope-impl", action="append", default=[], metavar="TARGET",
                    help="implementation under test, path/to/file.py:name or package.module:name (repeatable; "
                         "env ROPESPEC_IMPL, comma-separated). Default: the shipped implementations")
    group.addoption("--rope-expect", metavar="EXPECT", action="append", default=[],
                    help="expectation: a preset, inline JSON, a JSON file or a config.json; repeatable, and a glob of "
                         "files, for a configuration matrix. Default: drawn for factories, the default expectation for "
                         "plain functions")
    group.addoption("--rope-array", choices=("numpy", "torch", "jax", "list"), default=None,
                    help="how x is handed to --rope-impl targets. Default: numpy")
    group.addoption("--rope-dtype", default=None, metavar="DTYPE",
                    help="dtype of x and of the output (float64, float32, float16, bfloat16; a comma-separated list "
                         "for a matrix). Default: the expectation's (float32)")
    group.addoption("--rope-max-position", type=int, default=None, metavar="N",
                    help="largest position tested is N-1. Default: 131072")
    group.addoption("--rope-timeout", type=float, default=None, metavar="S",
                    help="seconds one call of the implementation may take (0: no limit). Default: 10")
    group.addoption("--rope-warmup-timeout", type=float, default=None, metavar="S",
                    help="seconds for importing it, its factory and a first warm-up call (0: no limit). Default: 300")
    group.addoption("--rope-memory-limit", default=None, metavar="SIZE",
                    help="memory each implementation's worker process may hold, e.g. 1GB (0: no limit). Default: half "
                         "the machine's memory")
    group.addoption("--rope-form", default="apply", metavar="FORM",
                    help="which function of the rope family --rope-impl targets are (apply, table, kernel, qk, vllm), "
                         "as ropespec check's --form. Default: apply")
    group.addoption("--rope-layout", default="nd", metavar="LAYOUT",
                    help="how an apply function takes its rows (nd, bshd, bhsd, sbhd, thd; a comma-separated list for a "
                         "matrix), as --layout. Default: nd")
    group.addoption("--rope-positions", default="per-sequence", metavar="WHAT",
                    help="with --rope-layout thd: per-sequence (one offset per sequence) or per-token, as --positions")
    group.addoption("--rope-inplace", action="store_true", default=False,
                    help="the function writes its result into x, as --inplace")
    group.addoption("--rope-profile", choices=("dev", "ci", "thorough"), default=None,
                    help="hypothesis profile of the RoPE properties and of rope_check. Default: dev "
                         "(ci on CI machines; --hypothesis-profile also selects)")


def pytest_configure(config: pytest.Config) -> None:
    """Choose the profile of ropespec's own properties; no other test's Hypothesis settings change."""
    from ropespec.properties import profiles

    chosen = config.getoption("rope_profile", None)
    hyp = config.getoption("hypothesis_profile", None) or ""
    if not chosen and hyp.startswith("ropespec-"):
        chosen = hyp.removeprefix("ropespec-")
    profiles.set_active(chosen)
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
    except UsageError as e:
        raise pytest.UsageError(str(e)) from None


def _configurations(config: pytest.Config) -> list:
    """The matrix of --rope-expect, --rope-dtype and --rope-layout (one combination without lists), read once."""
    if _CONFIGURATIONS_KEY not in config.stash:
        from ropespec.commands import matrix

        from ropespec.inputs import UsageError

        with _usage_errors():
            try:
                config.stash[_CONFIGURATIONS_KEY] = matrix.configurations(config.getoption("rope_expect") or None,
                                                                  config.getoption("rope_dtype"),
                                                                  config.getoption("rope_layout"))
            except UsageError as e:  # said with this plugin's option names
                raise UsageError(re.sub(r"^--(expect|dtype|layout):", r"--rope-\1:", str(e))) from None
    return config.stash[_CONFIGURATIONS_KEY]


def _implementations(config: pytest.Config) -> list:
    if _KEY not in config.stash:
        from ropespec.commands import matrix
        from ropespec.inputs import call_shape, load_all

        targets = list(config.getoption("rope_impl"))
        if not targets and os.environ.get("ROPESPEC_IMPL"):
            targets = [t.strip() for t in os.environ["ROPESPEC_IMPL"].split(",") if t.strip()]
        loading = lambda c: dict(  # noqa: E731
            array=config.getoption("rope_array"), dtype=c.dtype, max_position=config.getoption("rope_max_position"),
            timeout=config.getoption("rope_timeout"), warmup_timeout=config.getoption("rope_warmup_timeout"),
            memory_limit=config.getoption("rope_memory_limit"),
            shape=call_shape(form=config.getoption("rope_form"), layout=c.layout,
                             positions=config.getoption("rope_positions"), inplace=config.getoption("rope_inplace")))
        with _usage_errors():
            config.stash[_KEY] = load_all(matrix.requests_for(targets, _configurations(config), loading))
    return config.stash[_KEY]


def _test_id(impl, single_target: bool) -> str:
    """An implementation's test id: its name; in a matrix its combination, after the TARGET's name unless there is
    one TARGET (``[llama3.1-8b-bfloat16-bshd]``)."""
    from ropespec.report import config_tag

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
