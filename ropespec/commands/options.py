"""Options several commands share, each defined once, and what they turn into."""

from __future__ import annotations

import argparse
import json
import sys

from ropespec.implementations import arrays
from ropespec.properties.profiles import DEFAULT_PROFILE, PROFILES
from ropespec.implementations.contract import Failure
from ropespec.inputs import UsageError, call_shape
from ropespec.outputs import input_files, plan
from ropespec.spec.expectation import DTYPES
from ropespec.spec import families
from ropespec.spec.glossary import FORMS, LAYOUTS, POSITIONS

#: what --expect takes, said once for every command that has it
EXPECT_HELP = ("a preset name (ropespec presets lists them, e.g. llama3.1-8b), inline JSON ('{\"head_dim\": 128, "
               "\"rope_theta\": 500000}'), a JSON file, or a Hugging Face config.json (path)")


def expect(p: argparse.ArgumentParser, *, required: bool = False, default: str = "", matrix: bool = False) -> None:
    if matrix:
        p.add_argument("--expect", metavar="PRESET|JSON|FILE|GLOB", action="append",
                       help=f"the expectation: {EXPECT_HELP}" + (f" (default: {default})" if default else "")
                            + "; repeatable, and a glob of files (configs/**/config.json) gives one each: every "
                              "expectation is a configuration of the matrix")
        return
    p.add_argument("--expect", metavar="PRESET|JSON|FILE", required=required,
                   help=f"the expectation: {EXPECT_HELP}" + (f" (default: {default})" if default else ""))


def array(p: argparse.ArgumentParser) -> None:
    p.add_argument("--array", choices=arrays.ARRAYS, help="how x is handed to TARGET (default: numpy)")


def dtype(p: argparse.ArgumentParser, default: str = "the expectation's, float32", matrix: bool = False) -> None:
    if matrix:
        p.add_argument("--dtype", metavar="DTYPE[,DTYPE...]",
                       help=f"dtype of x and of the output, {'|'.join(DTYPES)}; a comma-separated list checks each "
                            f"(default: {default})")
        return
    p.add_argument("--dtype", choices=DTYPES, help=f"dtype of x and of the output (default: {default})")


def device(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="cpu", help="torch device for --array torch, e.g. cuda (default: cpu)")


def profile(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE,
                   help=f"hypothesis profile (default: {DEFAULT_PROFILE})")


def limits(p: argparse.ArgumentParser) -> None:
    """How long a call may take, and how much memory the code under test may hold."""
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="seconds one call of the implementation may take, and as many again per 1024 rows of a longer "
                        "call (0: no limit; default: 10)")
    p.add_argument("--warmup-timeout", type=float, default=300.0, metavar="S",
                   help="seconds for the warm-up: importing TARGET, the factory and the first call "
                        "(imports, JIT compilation; 0: no limit; default: 300)")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory the code under test's worker process may hold, enforced by the OS, e.g. 1GB, 512MB, "
                        "2GiB (0: no limit; default: half the machine's memory): an allocation beyond it fails, and "
                        "the property says it ran out of memory")


_FORM_HELP = "; ".join(f"{name}: {what}" for name, what in FORMS.items())


def shape(p: argparse.ArgumentParser, *, family: bool = False, form_note: str = "", matrix: bool = False) -> None:
    """How TARGET is called: its family (check only), form, layout, table and whether it writes in place."""
    if family:
        p.add_argument("--family", choices=families.names(), default="rope",
                       help="what TARGET computes: " + "; ".join(f"{n}: {w}" for n, w in families.words().items())
                            + " (default: rope)")
    p.add_argument("--form", choices=list(FORMS), default="apply",
                   help=f"which function of the rope family TARGET is: {_FORM_HELP} (default: apply; a kernel's "
                        f"table attribute says 'dim', the default, or 'pair')" + (f"; {form_note}" if form_note else ""))
    p.add_argument("--layout", **({"metavar": "LAYOUT[,LAYOUT...]"} if matrix else {"choices": list(LAYOUTS)}),
                   default="nd",
                   help="how an apply function takes its rows: " + "; ".join(f"{n}: {w}" for n, w in LAYOUTS.items())
                        + (" (default: nd; a comma-separated list checks each)" if matrix else " (default: nd)"))
    p.add_argument("--positions", choices=list(POSITIONS), default="per-sequence",
                   help="with --layout thd, what the packed call's positions are: "
                        + "; ".join(f"{n}: {w}" for n, w in POSITIONS.items()) + " (default: per-sequence)")
    p.add_argument("--table", metavar="TARGET",
                   help="with --form kernel or qk: the library's own table builder table(positions) -> (cos, sin) (a "
                        "function or a factory), and the two are checked together as one apply function, "
                        "f(x, positions) = kernel(x, *table(positions)), by every apply property")
    p.add_argument("--inplace", action="store_true",
                   help="the function writes its result into x (vllm: into query and key): x after the call is "
                        "checked, and nothing outside it may change")


def shape_of(args: argparse.Namespace):
    """The call shape the options say (:func:`ropespec.inputs.call_shape`)."""
    return call_shape(family=getattr(args, "family", "rope"), form=getattr(args, "form", "apply"),
                      layout=getattr(args, "layout", "nd"), inplace=getattr(args, "inplace", False),
                      table=getattr(args, "table", None), positions=getattr(args, "positions", "per-sequence"))


def loading(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`ropespec.inputs.load_implementations` that the shared options give."""
    return dict(array=getattr(args, "array", None), dtype=getattr(args, "dtype", None),
                max_position=getattr(args, "max_position", None), device=getattr(args, "device", "cpu"),
                timeout=getattr(args, "timeout", None), warmup_timeout=getattr(args, "warmup_timeout", None),
                memory_limit=getattr(args, "memory_limit", None), shape=shape_of(args))


def outputs(args: argparse.Namespace, **options: str | None):
    """The command's report paths, checked before anything runs against what it reads (its TARGET and the modules
    that imports from its folder, --table, --expect, --module, --impl) and against each other."""
    targets = [t for t in (getattr(args, "target", None), getattr(args, "table", None), getattr(args, "impl", None))
               if t] + list(getattr(args, "targets", None) or [])
    return plan(options, input_files(targets, expect=getattr(args, "expect", None), module=getattr(args, "module", None),
                                     resume=getattr(args, "resume", None)))


def json_text(data: dict) -> str:
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def written(outs, option: str, text: str) -> int:
    """Write one report: 0, or 2 with one line when it could not be written (a full disk, a closed pipe)."""
    problem = outs.write(option, text)
    if problem:
        print(f"ropespec: error: {problem}", file=sys.stderr)
        return 2
    return 0


def function_of(impl, target: str, *, bound: bool = False):
    """The implementation as f(x, positions) for its expectation (precision, fingerprint), or (``bound``) as its
    form's Bound (a bias family's fingerprint); UsageError when it cannot run here or declines the expectation; a
    Failure of the target itself goes to the caller."""
    if impl.skip_reason:
        raise UsageError(f"TARGET {target}: {impl.skip_reason}")
    try:
        return impl.bind(impl.expect) if bound else impl.as_rope(impl.expect)
    except Failure:
        raise
    except Exception as ex:  # Unsupported: the factory declines this expectation
        raise UsageError(f"TARGET {target}: cannot build for {impl.expect.describe()}: {ex}") from None


def failed_to_run(console, target: str, ex: Failure) -> int:
    """A target that failed as a program while being measured: one line, exit 1."""
    console.print(f"{target}: {ex.message}" + (f" [{ex.diagnosis}]" if ex.diagnosis else ""), highlight=False,
                  markup=False)
    return 1
