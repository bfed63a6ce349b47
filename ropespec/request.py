"""What a command is asked to do, typed: one frozen request per command, its fields the command's options.

Every option is stated once, here, as a field of its command's request: its default, and the command-line words that
give it (flags, argparse's keywords, help), from which each command's parser is made (:meth:`Request.add_arguments`).
A request is built in one of three places, each reading its source once and handing on nothing but the request:

* :meth:`Request.from_namespace`, from the command line (:func:`parsed`, the one reader of argparse's namespace);
* :meth:`CheckRequest.from_keywords` and :meth:`FingerprintRequest.from_keywords`, from the Python API's keywords
  (the keywords are the fields marked ``api``, documented by their help: the site's Python reference is made from it);
* :meth:`CheckRequest.from_pytest`, from the pytest plugin's ``--rope-*`` options (the fields marked ``pytest``).

Each validates what it can say in one line (a usage error, exit 2) as it is built. A check's request is printable as
the command that makes it again (:meth:`Request.command_line`, what a replay prints) and as JSON (the report's header,
which ``--resume`` reads back); a configuration matrix is a list of them, one per configuration
(:meth:`CheckRequest.configurations`), each turned into the implementations to load (:meth:`CheckRequest.load_requests`),
which the ``-j`` runners and the cluster ship as they are.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from ropespec import matrix
from ropespec.implementations import arrays, libraries
from ropespec.implementations.boundary.targets import is_config_target
from ropespec.implementations.shape import CallShape
from ropespec.inputs import UsageError, call_shape, check_seconds, parse_memory, parse_replay
from ropespec.outputs import Outputs, input_files, plan
from ropespec.properties.framework import select_properties
from ropespec.properties.profiles import DEFAULT_PROFILE, PROFILES
from ropespec.spec import families
from ropespec.spec.expectation import DTYPES, Expect
from ropespec.spec.glossary import FORMS, LAYOUTS, POSITIONS


@dataclass(frozen=True)
class Flag:
    """How a field is given on the command line: its flags and argparse's keywords (``help`` among them);
    ``before``: other flags of the same field, added before it (-x for --maxfail); ``api``: a keyword of the Python
    API too; ``pytest``: the pytest plugin's option for it, and ``pytest_help`` its help there where it says more."""

    flags: tuple[str, ...]
    kwargs: dict
    before: tuple = ()
    api: bool = True
    pytest: str | None = None
    pytest_help: str | None = None

    @property
    def help(self) -> str:
        return self.arguments().get("help", "")

    def arguments(self) -> dict:
        """argparse's keywords, those read when a parser is made (a registry's choices) read now."""
        return {k: v() if callable(v) and k in ("choices", "help") else v for k, v in self.kwargs.items()}


def option(default: Any, *flags: str, before: tuple = (), api: bool = True, pytest: str | None = None,
           pytest_help: str | None = None, cli_default: Any = None, **kwargs) -> Any:
    """A request's field given by ``flags`` on the command line (argparse's ``kwargs``), ``default`` when not given
    (``cli_default``: what the command line gives when the option is not, where that is not the field's default)."""
    if cli_default is not None:
        kwargs["default"] = cli_default
    return field(default=default, metadata={"flag": Flag(tuple(flags), kwargs, tuple(before), api, pytest,
                                                         pytest_help)})


def keyword(default: Any, help: str) -> Any:
    """A field of the Python API alone (no command-line option): a callable, or what only a program asks."""
    return field(default=default, metadata={"flag": Flag((), {"help": help}, api=True)})


# -- the options several commands share, each stated once ---------------------------------------------------------------
#: what --expect takes, said once for every command that has it
EXPECT_HELP = ("a preset name (ropespec presets lists them, e.g. llama3.1-8b), inline JSON ('{\"head_dim\": 128, "
               "\"rope_theta\": 500000}'), a JSON file, or a Hugging Face config.json (path)")
_FORM_HELP = "; ".join(f"{name}: {what}" for name, what in FORMS.items())


def expect_option(*, default: str = "", required: bool = False, matrix: bool = False, metavar: str | None = None,
                  help: str | None = None) -> Any:
    said = help or f"the expectation: {EXPECT_HELP}" + (f" (default: {default})" if default else "")
    if matrix:
        return option((), "--expect", metavar="PRESET|JSON|FILE|GLOB", action="append",
                      help=said + "; repeatable, and a glob of files (configs/**/config.json) gives one each: every "
                                  "expectation is a configuration of the matrix",
                      pytest="--rope-expect", pytest_help=(
                          "expectation: a preset, inline JSON, a JSON file or a config.json; repeatable, and a glob of "
                          "files, for a configuration matrix. Default: drawn for factories, the default expectation "
                          "for plain functions"))
    return option(None, "--expect", metavar=metavar or "PRESET|JSON|FILE", required=required, help=said)


def array_option() -> Any:
    return option(None, "--array", choices=arrays.ARRAYS, help="how x is handed to TARGET (default: numpy)",
                  pytest="--rope-array", pytest_help="how x is handed to --rope-impl targets. Default: numpy")


def dtype_option(default: str = "the expectation's, float32", matrix: bool = False) -> Any:
    if matrix:
        return option(None, "--dtype", metavar="DTYPE[,DTYPE...]",
                      help=f"dtype of x and of the output, {'|'.join(DTYPES)}; a comma-separated list checks each "
                           f"(default: {default})", pytest="--rope-dtype",
                      pytest_help="dtype of x and of the output (float64, float32, float16, bfloat16; a "
                                  "comma-separated list for a matrix). Default: the expectation's (float32)")
    return option(None, "--dtype", choices=DTYPES, help=f"dtype of x and of the output (default: {default})")


def device_option() -> Any:
    return option("cpu", "--device", help="torch device for --array torch, e.g. cuda (default: cpu)")


def profile_option() -> Any:
    return option(DEFAULT_PROFILE, "--profile", choices=PROFILES, help=f"hypothesis profile (default: {DEFAULT_PROFILE})")


def timeout_option() -> Any:
    return option(10.0, "--timeout", type=float, metavar="S",
                  help="seconds one call of the implementation may take, and as many again per 1024 rows of a longer "
                       "call (0: no limit; default: 10)", pytest="--rope-timeout",
                  pytest_help="seconds one call of the implementation may take (0: no limit). Default: 10")


def warmup_timeout_option() -> Any:
    return option(300.0, "--warmup-timeout", type=float, metavar="S",
                  help="seconds for the warm-up: importing TARGET, the factory and the first call "
                       "(imports, JIT compilation; 0: no limit; default: 300)", pytest="--rope-warmup-timeout",
                  pytest_help="seconds for importing it, its factory and a first warm-up call (0: no limit). "
                              "Default: 300")


def memory_limit_option() -> Any:
    return option(None, "--memory-limit", metavar="SIZE",
                  help="memory the code under test's worker process may hold, enforced by the OS, e.g. 1GB, 512MB, "
                       "2GiB (0: no limit; default: half the machine's memory): an allocation beyond it fails, and "
                       "the property says it ran out of memory", pytest="--rope-memory-limit",
                  pytest_help="memory each implementation's worker process may hold, e.g. 1GB (0: no limit). Default: "
                              "half the machine's memory")


def family_option() -> Any:
    # read when a parser is made: a family registered after this module is imported is one of the choices too
    return option("rope", "--family", choices=families.names,
                  help=lambda: "what TARGET computes: " + "; ".join(f"{n}: {w}" for n, w in families.words().items())
                               + " (default: rope)",
                  pytest="--rope-family", pytest_help="what the --rope-impl targets compute, as ropespec check's "
                                                      "--family (rope, model, alibi, ...). Default: rope")


def form_option(note: str = "") -> Any:
    return option("apply", "--form", choices=list(FORMS),
                  help=f"which function of the rope family TARGET is: {_FORM_HELP} (default: apply; a kernel's "
                       f"table attribute says 'dim', the default, or 'pair')" + (f"; {note}" if note else ""),
                  pytest="--rope-form", pytest_help="which function of the rope family --rope-impl targets are "
                                                    "(apply, table, kernel, qk, vllm), as ropespec check's --form. "
                                                    "Default: apply")


def layout_option(matrix: bool = False) -> Any:
    said = "how an apply function takes its rows: " + "; ".join(f"{n}: {w}" for n, w in LAYOUTS.items())
    if matrix:
        return option("nd", "--layout", metavar="LAYOUT[,LAYOUT...]",
                      help=said + " (default: nd; a comma-separated list checks each)", pytest="--rope-layout",
                      pytest_help="how an apply function takes its rows (nd, bshd, bhsd, sbhd, thd; a comma-separated "
                                  "list for a matrix), as --layout. Default: nd")
    return option("nd", "--layout", choices=list(LAYOUTS), help=said + " (default: nd)")


def positions_option() -> Any:
    return option("per-sequence", "--positions", choices=list(POSITIONS),
                  help="with --layout thd, what the packed call's positions are: "
                       + "; ".join(f"{n}: {w}" for n, w in POSITIONS.items()) + " (default: per-sequence)",
                  pytest="--rope-positions", pytest_help="with --rope-layout thd: per-sequence (one offset per "
                                                         "sequence) or per-token, as --positions")


def table_option() -> Any:
    return option(None, "--table", metavar="TARGET",
                  help="with --form kernel or qk: the library's own table builder table(positions) -> (cos, sin) (a "
                       "function or a factory), and the two are checked together as one apply function, "
                       "f(x, positions) = kernel(x, *table(positions)), by every apply property")


def inplace_option() -> Any:
    return option(False, "--inplace", action="store_true",
                  help="the function writes its result into x (vllm: into query and key): x after the call is "
                       "checked, and nothing outside it may change", pytest="--rope-inplace",
                  pytest_help="the function writes its result into x, as --inplace")


def seed_option(default: int | None, help: str) -> Any:
    return option(default, "--seed", type=int, help=help)


class Request:
    """A command's request: a frozen dataclass whose fields are the command's options (:func:`option`). The fields a
    command does not have read as these defaults, so that what every request is asked (how to load a TARGET, what it
    reads) is said once, here."""

    COMMAND: ClassVar[str] = ""
    target = None
    targets: tuple = ()
    table = None
    impl = None
    expect = None
    module = None
    resume = None
    array = None
    dtype = None
    max_position = None
    device = "cpu"
    timeout = None
    warmup_timeout = None
    memory_limit = None
    family = "rope"
    form = "apply"
    layout = "nd"
    positions = "per-sequence"
    inplace = False
    isolate = None

    # -- built ------------------------------------------------------------------------------------------------------
    @classmethod
    def add_arguments(cls, p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        """The command's options on its parser, from its fields, in their order."""
        for f in fields(cls):
            flag = f.metadata.get("flag")
            if flag is None or not flag.flags:
                continue
            for flags, kwargs in flag.before:
                p.add_argument(*flags, dest=f.name, **kwargs)
            kwargs = flag.arguments()
            if flag.flags[0].startswith("-"):
                kwargs.setdefault("default", None if isinstance(f.default, tuple) else f.default)
                p.add_argument(*flag.flags, dest=f.name, **kwargs)
            else:  # a positional argument: its name is the field's
                if isinstance(f.default, tuple) or f.default is not None:
                    kwargs.setdefault("default", list(f.default) if isinstance(f.default, tuple) else f.default)
                p.add_argument(f.name, **kwargs)
        return p

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> "Request":
        """The request the command line gave (argparse's namespace, read here and nowhere else)."""
        given = {}
        for f in fields(cls):
            if f.metadata.get("flag") is None or not hasattr(ns, f.name):
                continue
            value = getattr(ns, f.name)
            if isinstance(value, list):
                value = tuple(value)
            elif value is None and isinstance(f.default, tuple):
                value = f.default
            given[f.name] = value
        return cls(**given)

    def replace(self, **changes) -> "Request":
        return dataclasses.replace(self, **changes)

    # -- what it asks ------------------------------------------------------------------------------------------------
    def shape(self, layout: str | None = None) -> CallShape:
        """How TARGET is called (:func:`ropespec.inputs.call_shape`): UsageError when the options do not fit."""
        return call_shape(family=self.family, form=self.form, layout=layout or self.layout, inplace=self.inplace,
                          table=self.table, positions=self.positions)

    def loading(self, *, dtype: str | None = None, layout: str | None = None) -> dict:
        """The keyword arguments of :func:`ropespec.inputs.load_requests` this request gives (``dtype`` and ``layout``:
        one configuration's, where the request holds a list)."""
        return dict(array=self.array, dtype=dtype if dtype is not None else self.dtype, max_position=self.max_position,
                    device=self.device, timeout=self.timeout, warmup_timeout=self.warmup_timeout,
                    memory_limit=self.memory_limit, shape=self.shape(layout), isolate=self.isolate)

    def inputs(self) -> list[tuple[str, str]]:
        """What the command reads, as (what it is, path): its TARGETs and the modules they import from their folder,
        --table, --impl, the --expect files, the lab module, the report it resumes from."""
        targets = [t for t in (self.target, self.table, self.impl) if t] + list(self.targets or ())
        expect = self.expect if isinstance(self.expect, (str, type(None))) else \
            [e for e in self.expect if isinstance(e, str)] if isinstance(self.expect, tuple) else None
        return input_files(targets, expect=expect, module=self.module, resume=self.resume)

    def outputs(self, **paths: str | None) -> Outputs:
        """The command's report paths (``--json``: the path, ...), checked before anything runs against what it reads
        and against each other."""
        return plan(paths, self.inputs())

    # -- said ----------------------------------------------------------------------------------------------------------
    def command_line(self) -> str:
        """The command that makes this request again: ``ropespec COMMAND`` and every option that is not its default,
        in the parser's order."""
        words = ["ropespec", self.COMMAND]
        for f in fields(self):
            flag = f.metadata.get("flag")
            value = getattr(self, f.name)
            if flag is None or not flag.flags or value == f.default:
                continue
            if not flag.flags[0].startswith("-"):
                words += [str(v) for v in (value if isinstance(value, tuple) else (value,))]
            elif flag.kwargs.get("action") == "store_true":
                words.append(flag.flags[0])
            else:
                for v in value if isinstance(value, tuple) else (value,):
                    words += [_long(flag.flags), _word(v)]
        return " ".join(shlex.quote(w) for w in words)

    def to_json(self) -> dict:
        """The request as JSON: every command-line field, what the command line would give (an expectation as the
        JSON --expect takes; a callable by the name a replay prints)."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in fields(self)
                if f.metadata.get("flag") is not None and f.metadata["flag"].flags}

    @classmethod
    def from_json(cls, d: dict) -> "Request":
        """The request :meth:`to_json` wrote (lists read as tuples)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in known})


def _long(flags: tuple[str, ...]) -> str:
    return next((f for f in flags if f.startswith("--")), flags[0])


def _word(v) -> str:
    if isinstance(v, Expect):
        return v.to_json()
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else repr(v)
    return str(v) if not callable(v) else getattr(v, "__qualname__", repr(v))


def _jsonable(v):
    if isinstance(v, Expect):
        return v.to_dict()
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if callable(v):
        return getattr(v, "__qualname__", repr(v))
    return v


# -- ropespec check -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckRequest(Request):
    """``ropespec check``, the Python API's :func:`ropespec.check` and the pytest plugin's implementations: what to
    check, against what, how, and what to do with the results."""

    COMMAND: ClassVar[str] = "check"

    targets: tuple = option((), "targets", nargs="*", metavar="TARGET",
                            help="path/to/file.py:name or package.module:name; a function f(x, positions) or a factory "
                                 "make(expect)", pytest="--rope-impl",
                            pytest_help="implementation under test, path/to/file.py:name or package.module:name "
                                        "(repeatable; env ROPESPEC_IMPL, comma-separated). Default: the shipped "
                                        "implementations")
    module: str | None = option(None, "--module", metavar="PATH", api=False,
                                help="grade the tutorial lab module at PATH instead of a TARGET (as ropespec lab PATH "
                                     "does)")
    array: str | None = array_option()
    dtype: str | None = dtype_option(matrix=True)
    expect: tuple = expect_option(default="drawn for factories", matrix=True)
    max_position: int | None = option(None, "--max-position", type=int, metavar="N",
                                      help="largest position tested is N-1 (default: 131072)",
                                      pytest="--rope-max-position",
                                      pytest_help="largest position tested is N-1. Default: 131072")
    family: str = family_option()
    form: str = form_option()
    table: Any = table_option()
    layout: str = layout_option(matrix=True)
    positions: str = positions_option()
    inplace: bool = inplace_option()
    invariants: tuple = option((), "--invariant", action="append", metavar="ID",
                               help="check only this invariant (repeatable); ID:property runs one of its properties "
                                    "(rope.conformance:large_positions), as replay commands do")
    profile: str | None = option(None, "--profile", choices=PROFILES, cli_default=DEFAULT_PROFILE,
                                 help=f"hypothesis profile (default: {DEFAULT_PROFILE})", pytest="--rope-profile",
                                 pytest_help="hypothesis profile of the RoPE properties and of rope_check. Default: "
                                             "dev (ci on CI machines; --hypothesis-profile also selects)")
    seed: int | None = seed_option(None, "seed for a reproducible run (default: random, printed)")
    replay: str | None = option(None, "--replay", metavar="VERSION:BLOB",
                                help="replay one failing case printed by an earlier run")
    device: str = device_option()
    jobs: int = option(1, "-j", "--jobs", type=int, metavar="N", api=False,
                       help="check implementations in N processes (default: 1; at most one per implementation and per "
                            "core unless --force-jobs)")
    force_jobs: bool = option(False, "--force-jobs", action="store_true", api=False,
                              help="use -j N as given, above the number of cores")
    cluster: str | None = option(None, "--cluster", metavar="ADDRESS", api=False,
                                 help="check each implementation as a task on the Ray cluster whose head node is at "
                                      "HOST:PORT, or on one started here for the run (local); needs the cluster extra")
    timeout: float | None = timeout_option()
    warmup_timeout: float | None = warmup_timeout_option()
    memory_limit: Any = memory_limit_option()
    maxfail: int | None = option(None, "--maxfail", type=int, metavar="N", api=False,
                                 help="stop once N implementations have failed; those not yet checked are left out of "
                                      "the report",
                                 before=((("-x", "--exitfirst"), {"action": "store_const", "const": 1, "help": (
                                     "stop at the first failing implementation (as --maxfail 1)")}),))
    allow_skip: bool = option(False, "--allow-skip", action="store_true",
                              help="exit 0 (not 2) when every property was skipped on an implementation (CI matrices)")
    json: str | None = option(None, "--json", metavar="PATH", api=False,
                              help="write the results as JSON (schema: docs/reference/reports.md; - for standard "
                                   "output)")
    junit: str | None = option(None, "--junit", metavar="PATH", api=False,
                               help="write the results as JUnit XML (one testcase per property)")
    resume: str | None = option(None, "--resume", metavar="REPORT", api=False,
                                help="run only the checks the --json REPORT of an earlier run of this command does not "
                                     "hold (with its seed), and report them all")
    isolate: bool | None = keyword(None, "False runs the implementation in this process (a callable another process "
                                         "cannot load runs here anyway, and the report's header says so)")

    def __post_init__(self) -> None:
        """What the request itself says is wrong, in one line (UsageError)."""
        if self.jobs < 1:
            raise UsageError(f"-j: must be >= 1, got {self.jobs}")
        if self.maxfail is not None and self.maxfail < 1:
            raise UsageError(f"--maxfail: must be >= 1, got {self.maxfail}")
        if self.module and self.targets:
            raise UsageError("--module grades a lab module: give no TARGET with it")
        configs = [t for t in self.targets if is_config_target(t)]
        missing = [t for t in configs if not os.path.isfile(t)]
        if missing:
            raise UsageError(f"TARGET {missing[0]}: no such file")
        if configs and self.family not in families.of_config_targets():
            raise UsageError(f"TARGET {configs[0]}: a config.json is checked as a whole model, a tiny one of its own "
                             f"class: add --family {' or '.join(families.of_config_targets())}")
        if configs and not self.expect:  # its expectation is its own RoPE
            if len(self.targets) > 1:
                raise UsageError(f"TARGET {configs[0]}: with other TARGETs, say the expectation: --expect {configs[0]}")
            object.__setattr__(self, "expect", (configs[0],))
        if configs and self.dtype is None:  # a tiny model built from a config runs in float64
            object.__setattr__(self, "dtype", "float64")

    @classmethod
    def from_keywords(cls, fn, expect=None, **keywords) -> "CheckRequest":
        """The Python API's request: ``fn`` (a function, a factory or a TARGET string), ``expect`` (a preset, a dict,
        JSON, a config.json path or an Expect) and the keywords the API takes (:func:`api_keywords`), each a field;
        TypeError for another keyword, as a Python call gives."""
        allowed = api_keywords(cls)
        unknown = sorted(set(keywords) - set(allowed) - {"invariants"})
        if unknown:
            raise TypeError(f"check() got an unexpected keyword argument {unknown[0]!r}")
        if keywords.get("invariants") is not None:
            keywords["invariants"] = tuple(keywords["invariants"])
        keywords = {k: v for k, v in keywords.items() if v is not None}  # None: the default, as the CLI's
        return cls(targets=(fn,), expect=() if expect is None else (expect,), **keywords)

    @classmethod
    def from_pytest(cls, config) -> "CheckRequest":
        """The pytest plugin's request, from its ``--rope-*`` options (pytest's option object, read here and nowhere
        else) and ROPESPEC_IMPL where --rope-impl is not given."""
        given = {}
        for f in fields(cls):
            flag = f.metadata.get("flag")
            if flag is None or flag.pytest is None:
                continue
            value = config.getoption(_pytest_dest(flag.pytest), None)
            if isinstance(value, list):
                value = tuple(value)
            if value is not None and value != ():
                given[f.name] = value
        if not given.get("targets") and os.environ.get("ROPESPEC_IMPL"):
            given["targets"] = tuple(t.strip() for t in os.environ["ROPESPEC_IMPL"].split(",") if t.strip())
        hyp = config.getoption("hypothesis_profile", None) or ""
        if not given.get("profile") and hyp.startswith("ropespec-"):
            given["profile"] = hyp.removeprefix("ropespec-")
        return cls(**given)

    #: the fields that say what a run checks: a report resumed by another request of these is another run's
    CHECKED: ClassVar[tuple[str, ...]] = ("targets", "expect", "array", "family", "form", "layout", "positions", "table",
                                          "inplace", "dtype", "max_position", "invariants", "replay", "device")

    def checks_otherwise(self, other: "CheckRequest") -> list[str]:
        """The options by which ``other`` checks something else than this request: :data:`CHECKED` that differ."""
        mine, theirs = self.to_json(), other.to_json()
        return [name for name in self.CHECKED if mine.get(name) != theirs.get(name)]

    def properties(self):
        """The properties of the invariants asked for (every one by default); UsageError for an unknown one."""
        try:
            return select_properties(list(self.invariants) or None)
        except ValueError as e:
            raise UsageError(str(e)) from None

    def replayed(self) -> tuple[str, str] | None:
        """--replay, read (:func:`ropespec.inputs.parse_replay`)."""
        return parse_replay(self.replay)

    def configurations(self):
        """Every configuration of the matrix, validated (one when nothing is a list): :mod:`ropespec.matrix`."""
        return matrix.configurations(list(self.expect) or None, self.dtype, self.layout)

    def load_requests(self, configurations=None, notes: list[str] | None = None):
        """The implementations to load, one per TARGET (or shipped implementation) and configuration."""
        return matrix.requests_for(list(self.targets), configurations or self.configurations(),
                                   lambda c: self.loading(dtype=c.dtype, layout=c.layout), notes)


def options_of(cls) -> list[tuple[str, tuple[str, ...], str | None, str, str]]:
    """A command's options as its reference states them: (field, flags, metavar, default, help), in the parser's order;
    a positional argument's flags are its metavar."""
    out = []
    for f in fields(cls):
        flag = f.metadata.get("flag")
        if flag is None or not flag.flags:
            continue
        kwargs = flag.arguments()
        choices = kwargs.get("choices")
        meta = "|".join(choices) if choices else kwargs.get("metavar")
        if not flag.flags[0].startswith("-"):
            out.append((f.name, (kwargs.get("metavar") or f.name,), None, _said(f.default), flag.help))
            continue
        for flags, extra in flag.before:
            out.append((f.name, flags, None, _said(f.default), extra.get("help", "")))
        given = kwargs.get("default", f.default)
        out.append((f.name, flag.flags, None if kwargs.get("action") in ("store_true", "store_const") else meta,
                    _said(given), flag.help))
    return out


def api_options(cls) -> list[tuple[str, str, str]]:
    """The Python API's keywords of a request class: (keyword, default, help)."""
    defaults = {f.name: f.default for f in fields(cls)}
    return [(name, _said(defaults[name]), said) for name, said in api_keywords(cls).items()]


def pytest_options(cls) -> list[tuple[str, str]]:
    """The pytest plugin's options of a request class: (field, option)."""
    return [(f.name, f.metadata["flag"].pytest) for f in fields(cls)
            if f.metadata.get("flag") is not None and f.metadata["flag"].pytest]


def _said(default) -> str:
    """A default as the reference states it; none where the field leaves it to the command (its help says what)."""
    if default is None or default == ():
        return ""
    return str(default)


def _pytest_dest(flag: str) -> str:
    """pytest's name of an option: --rope-max-position is rope_max_position."""
    return flag.lstrip("-").replace("-", "_")


def api_keywords(cls) -> dict[str, str]:
    """The Python API's keywords of a request class, each with its help: the fields marked ``api``, but the first
    two (what to check and its expectation, positional)."""
    out = {}
    for f in fields(cls):
        flag = f.metadata.get("flag")
        if flag is not None and flag.api and f.name not in ("targets", "target", "expect"):
            out["invariants" if f.name == "invariants" else f.name] = flag.help
    return out


# -- ropespec fingerprint ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FingerprintRequest(Request):
    COMMAND: ClassVar[str] = "fingerprint"

    target: Any = option(None, "target", metavar="TARGET")
    expect: Any = expect_option(metavar="PRESET|JSON", help="builds a factory's function; only head_dim, dtype and "
                                                            "max_position guide the probing")
    array: str | None = array_option()
    dtype: str | None = dtype_option(default="float32")
    max_position: int | None = option(None, "--max-position", type=int, metavar="N",
                                      help="probe positions up to N-1 (default: the expectation's)")
    device: str = device_option()
    family: str = family_option()
    form: str = form_option(note="a table is probed through the RoPE its table defines; a kernel or qk function with "
                                 "ropespec's exact table (what it shows is its convention, direction and rotary dims: "
                                 "the frequencies are ropespec's)")
    layout: str = layout_option()
    positions: str = positions_option()
    table: Any = table_option()
    inplace: bool = inplace_option()
    timeout: float | None = timeout_option()
    warmup_timeout: float | None = warmup_timeout_option()
    memory_limit: Any = memory_limit_option()
    json: str | None = option(None, "--json", metavar="PATH", api=False,
                              help="write the fingerprint as JSON (- for standard output)")

    @classmethod
    def from_keywords(cls, fn, expect=None, **keywords) -> "FingerprintRequest":
        """The Python API's :func:`ropespec.fingerprint` request: ``fn``, ``expect`` and its keywords, each a field."""
        unknown = sorted(set(keywords) - set(api_keywords(cls)))
        if unknown:
            raise TypeError(f"fingerprint() got an unexpected keyword argument {unknown[0]!r}")
        return cls(target=fn, expect=expect, **{k: v for k, v in keywords.items() if v is not None})


# -- ropespec precision --------------------------------------------------------------------------------------------
#: where the sampled sweep ends unless --sweep-to says: far past any model's positions, where float32 angles are noise
SWEEP_TO = 1 << 31


@dataclass(frozen=True)
class PrecisionRequest(Request):
    COMMAND: ClassVar[str] = "precision"

    target: str | None = option(None, "target", nargs="?", metavar="TARGET",
                                help="default: the shipped numpy implementation")
    expect: str | None = expect_option(default="head_dim 128, theta 1e4, half")
    array: str | None = array_option()
    dtype: str | None = dtype_option(default="float32")
    max_position: int | None = option(None, "--max-position", type=int, metavar="N",
                                      help="the positions the model uses are 0 .. N-1, the verdict's (default: the "
                                           "expectation's max_position, 131072 unless it says)")
    sweep_to: int = option(SWEEP_TO, "--sweep-to", type=int, metavar="N",
                           help="sweep up to N-1, past max_position for information (default: 2^31; at least "
                                "max_position)")
    per_octave: int = option(2, "--per-octave", type=int, metavar="K", help="positions per doubling (default: 2)")
    vectors: int = option(4, "--vectors", type=int, metavar="V", help="random vectors per position (default: 4)")
    seed: int = seed_option(0, "seed of the random vectors (default: 0)")
    device: str = device_option()
    form: str = form_option(note="a table is swept through the RoPE its table defines; a kernel or qk function with "
                                 "ropespec's exactly rounded table, so the error is the kernel's own")
    layout: str = layout_option()
    positions: str = positions_option()
    table: Any = table_option()
    inplace: bool = inplace_option()
    timeout: float | None = timeout_option()
    warmup_timeout: float | None = warmup_timeout_option()
    memory_limit: Any = memory_limit_option()
    exhaustive: bool = option(False, "--exhaustive", action="store_true",
                              help="call TARGET on every position 0 .. N-1 (--max-position N, at most 2^27), a random "
                                   "vector each, and compare every output with ropespec.reference.fast: the exact "
                                   "first position where each class fails, and the worst one")
    chunk: int = option(8192, "--chunk", type=int, metavar="K",
                        help="with --exhaustive: positions per call (default 8192; memory grows with it)")
    atol: float | None = option(None, "--atol", type=float, metavar="A",
                                help="with --rtol: your own tolerance, as torch.testing.assert_close takes it "
                                     "(|actual - expected| <= atol + rtol |expected|, elementwise): where the output "
                                     "first leaves it; the exit code is then its verdict")
    rtol: float | None = option(None, "--rtol", type=float, metavar="R", help="with --atol: see --atol")
    plot: str | None = option(None, "--plot", metavar="PATH.png",
                              help="draw error vs position with the bounds (needs matplotlib)")
    json: str | None = option(None, "--json", metavar="PATH",
                              help="write the sweep as JSON (schema: docs/reference/reports.md; - for standard output)")


# -- ropespec golden, spec, proofs, lab, presets, invariants ----------------------------------------------------------
@dataclass(frozen=True)
class GoldenRequest(Request):
    COMMAND: ClassVar[str] = "golden"

    expect: str | None = expect_option(required=True)
    positions: str | None = option(None, "--positions", required=True, metavar="LIST",
                                   help="comma-separated positions, e.g. 1,999,65521")
    seed: int = seed_option(0, "seed of the input vectors (default: 0)")
    out: str | None = option(None, "--out", required=True, metavar="FILE",
                             help="where to write the JSON (- for standard output)")


@dataclass(frozen=True)
class ReadingsRequest(Request):
    COMMAND: ClassVar[str] = "readings"

    configs: tuple = option((), "configs", nargs="+", metavar="CONFIG",
                            help="config.json files, the folders that hold them, or globs of either (models/**/config.json)")
    library: str | None = option(None, "--library", metavar="LIST",
                                 help=f"comma-separated libraries whose reading is measured, each by its name or its "
                                      f"extra's: {libraries.listed()} (default: every one installed here)")
    out: str | None = option(None, "--out", metavar="PATH", help="also write the table as Markdown here")
    json: str | None = option(None, "--json", metavar="PATH", help="also write every measurement as JSON here")
    seed: int = seed_option(0, "seed of the probes' vectors and tokens (default: 0)")

    def inputs(self) -> list[tuple[str, str]]:
        return input_files(configs=self.configs)


@dataclass(frozen=True)
class SpecRequest(Request):
    COMMAND: ClassVar[str] = "spec"

    format: str = option("md", "--format", choices=("md", "html"))
    impl: str | None = option(None, "--impl", metavar="TARGET",
                              help="also show this implementation's verdict per invariant")
    expect: str | None = expect_option()
    array: str | None = array_option()
    dtype: str | None = dtype_option()
    seed: int = seed_option(0, "seed of the --impl check (default: 0)")
    out: str | None = option(None, "--out", metavar="PATH", help="write here instead of standard output")


@dataclass(frozen=True)
class ProofsRequest(Request):
    COMMAND: ClassVar[str] = "proofs"

    ids: tuple = option((), "ids", nargs="*", metavar="INVARIANT",
                        help="run only these invariants' entries (default: every one; ropespec invariants lists them)")
    record: str | None = option(None, "--record", metavar="PATH",
                                help="also write the results, date and commit, and the formulas sympy prints, as JSON "
                                     "(ropespec spec renders docs/proofs.json)")
    no_mutants: bool = option(False, "--no-mutants", action="store_true", help="skip the mutations (faster)")


@dataclass(frozen=True)
class LabRequest(Request):
    COMMAND: ClassVar[str] = "lab"

    module: str | None = option(None, "module", metavar="PATH", help="the lab module's .py file")
    seed: int = seed_option(0, "seed of the graded cases (default: 0)")
    json: str | None = option(None, "--json", metavar="PATH", help="write the grades as JSON")
    timeout: float | None = timeout_option()
    warmup_timeout: float | None = warmup_timeout_option()
    memory_limit: Any = memory_limit_option()

    @classmethod
    def of(cls, check: CheckRequest) -> "LabRequest":
        """``ropespec check --module PATH``: the lab's request, from check's own options."""
        return cls(module=check.module, seed=check.seed or 0, json=check.json, timeout=check.timeout,
                   warmup_timeout=check.warmup_timeout, memory_limit=check.memory_limit)


@dataclass(frozen=True)
class PresetsRequest(Request):
    COMMAND: ClassVar[str] = "presets"


@dataclass(frozen=True)
class InvariantsRequest(Request):
    COMMAND: ClassVar[str] = "invariants"


#: every command's request, by the command's name
REQUESTS: dict[str, type[Request]] = {cls.COMMAND: cls for cls in (
    CheckRequest, FingerprintRequest, PrecisionRequest, GoldenRequest, SpecRequest, ProofsRequest, LabRequest,
    PresetsRequest, InvariantsRequest, ReadingsRequest)}


def parsed(parser: argparse.ArgumentParser, argv: list[str] | None) -> Request:
    """The request a command line makes (``ropespec COMMAND ...``): parsed, with check's TARGETs given after an option
    taken as TARGETs (check a.py:f --invariant ID b.py:g), and built (:meth:`Request.from_namespace`). Bad usage is
    argparse's one line, exit 2, or UsageError."""
    ns, extra = parser.parse_known_args(argv)
    if extra and ns.command == "check":
        stray = [a for a in extra if a.startswith("-")]
        if stray:
            parser.error(f"unrecognized arguments: {' '.join(stray)}")
        ns.targets = [*ns.targets, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return REQUESTS[ns.command].from_namespace(ns)


__all__ = ["CheckRequest", "FingerprintRequest", "GoldenRequest", "InvariantsRequest", "LabRequest",
           "PrecisionRequest", "PresetsRequest", "ProofsRequest", "ReadingsRequest", "REQUESTS", "Request", "SpecRequest", "api_keywords",
           "option", "parsed"]
