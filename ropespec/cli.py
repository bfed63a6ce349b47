"""The ``ropespec`` command line. Exit codes: 0 everything holds, 1 an invariant fails,
2 bad usage, a bad expectation or a TARGET that cannot be loaded."""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from properties.profiles import DEFAULT_PROFILE, PROFILES
from ropespec import api, report
from ropespec.outputs import input_files, plan
from implementations import arrays, make_subject
from implementations.host import LAYOUTS
from implementations.contract import Failure, TargetError
from ropespec.inputs import (UsageError, build_subjects, call_shape, check_seconds, parse_expect, parse_replay,
                             subject_specs)
from spec.expectation import DTYPES, ExpectationError


EXIT_CODES = """exit codes:
  0    at least one property ran on every implementation, and every one held
  1    an invariant failed (including crash and timeout)
  2    bad usage, a bad expectation, a TARGET that does not load, or nothing checked on an
       implementation (every property skipped: the line says why; --allow-skip accepts it)
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM): the report of what finished is printed

examples:
  ropespec check my_rope.py:apply --expect '{"head_dim": 128, "rope_theta": 500000}'
  ropespec check kernels.py:make --array torch --dtype bfloat16 --expect llama3.1-8b -j 2 --json r.json
"""


#: what --expect takes, said once for every command that has it
EXPECT_HELP = ("a preset name (ropespec presets lists them, e.g. llama3.1-8b), inline JSON ('{\"head_dim\": 128, "
               "\"rope_theta\": 500000}'), a JSON file, or a Hugging Face config.json (path)")


def _timeouts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="seconds one call of the implementation may take (0: no limit; default: 10)")
    p.add_argument("--warmup-timeout", type=float, default=300.0, metavar="S",
                   help="seconds for the warm-up: importing TARGET, the factory and the first call "
                        "(imports, JIT compilation; 0: no limit; default: 300)")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory the code under test's worker process may hold, enforced by the OS, e.g. 1GB, 512MB, "
                        "2GiB (0: no limit; default: half the machine's memory): an allocation beyond it fails, and "
                        "the property says it ran out of memory")


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (no usage block): the field, what is wrong, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="ropespec",
        description="Executable specification and property-based verification of RoPE implementations.",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    c = sub.add_parser("check", help="check implementations against every invariant",
                       description="Check TARGETs (default: the shipped implementations) against every invariant. "
                                   "Each TARGET runs in a worker process of its own: a crash, a hang or an exit "
                                   "of the code under test is a verdict (crash, timeout), never the end of the run.",
                       epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("targets", nargs="*", metavar="TARGET",
                   help="path/to/file.py:name or package.module:name; a function f(x, positions) or a factory make(expect)")
    c.add_argument("--module", metavar="PATH",
                   help="grade the tutorial lab module at PATH (thetas, rotate_pair, rope, rope_score, additive_score, "
                        "turns, pairs_within_first_turn) instead of a TARGET")
    c.add_argument("--expect", metavar="PRESET|JSON|FILE", help=f"the expectation: {EXPECT_HELP} (default: drawn for factories)")
    c.add_argument("--array", choices=arrays.ARRAYS, help="how x is handed to TARGET (default: numpy)")
    c.add_argument("--family", choices=("rope", "sinusoidal", "learned", "attention"), default="rope",
                   help="what TARGET computes: rope f(x, positions) (default), sinusoidal pe(positions, d), learned "
                        "make(expect) -> table(positions), attention attend(q, k, v, positions, causal)")
    c.add_argument("--form", choices=FORMS, default="apply",
                   help="with the rope family, which function TARGET is: apply f(x, positions) (default); table "
                        "table(positions) -> (cos, sin), the cos/sin cache builder, per pair (n, rotary_dim/2) or per "
                        "dim (n, rotary_dim); or kernel kernel(x, cos, sin), rotating by the table it is given "
                        "(ropespec supplies it; the function's table attribute says 'dim' (default) or 'pair'); or qk "
                        "apply(q, k, cos, sin) -> (q_embed, k_embed), transformers' signature; or vllm "
                        "forward(positions, query, key) -> (query, key), heads flattened, vLLM's signature")
    _layout_options(c)
    c.add_argument("--dtype", choices=DTYPES, help="dtype of x and of the output (default: the expectation's, float32)")
    c.add_argument("--max-position", type=int, metavar="N", help="largest position tested is N-1 (default: 131072)")
    c.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help=f"hypothesis profile (default: {DEFAULT_PROFILE})")
    c.add_argument("--seed", type=int, help="seed for a reproducible run (default: random, printed)")
    c.add_argument("--invariant", action="append", metavar="ID", help="check only this invariant (repeatable); ID:property runs one of its properties (rope.conformance:large_positions), as replay commands do")
    c.add_argument("--replay", metavar="VERSION:BLOB", help="replay one failing case printed by an earlier run")
    c.add_argument("--device", default="cpu", help="torch device for --array torch, e.g. cuda (default: cpu)")
    c.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="check implementations in N processes (default: 1; at most one per implementation "
                        "and per core unless --force-jobs)")
    c.add_argument("--force-jobs", action="store_true", help="use -j N as given, above the number of cores")
    _timeouts(c)
    c.add_argument("--allow-skip", action="store_true",
                   help="exit 0 (not 2) when every property was skipped on an implementation (CI matrices)")
    c.add_argument("--json", metavar="PATH", help="write the results as JSON (schema in README)")
    c.add_argument("--junit", metavar="PATH", help="write the results as JUnit XML (one testcase per property)")

    g = sub.add_parser("golden", help="write inputs and exact outputs at chosen positions (for tests in any language)",
                       description="Write a golden file: inputs (exact in bfloat16) and the exact outputs rounded "
                                   "correctly to float64, float32 and bfloat16, as hex floats (format in README).")
    g.add_argument("--expect", metavar="PRESET|JSON|FILE", required=True, help=f"the expectation: {EXPECT_HELP}")
    g.add_argument("--positions", required=True, metavar="LIST", help="comma-separated positions, e.g. 1,999,65521")
    g.add_argument("--seed", type=int, default=0, help="seed of the input vectors (default: 0)")
    g.add_argument("--out", required=True, metavar="FILE", help="where to write the JSON")

    fpp = sub.add_parser("fingerprint", help="infer what an implementation computes, by probing it",
                         description="Probe TARGET with basis vectors and report its pairing, rotary dim, frequencies, "
                                     "base, scaling curve, direction, offset, attention factor, precision and preset.")
    fpp.add_argument("target", metavar="TARGET")
    fpp.add_argument("--expect", metavar="PRESET|JSON",
                     help="builds a factory's function; only head_dim, dtype and max_position guide the probing")
    fpp.add_argument("--array", choices=arrays.ARRAYS, help="how x is handed to TARGET (default: numpy)")
    fpp.add_argument("--dtype", choices=DTYPES, help="dtype of x and of the output (default: float32)")
    fpp.add_argument("--max-position", type=int, metavar="N", help="probe positions up to N-1 (default: the expectation's)")
    fpp.add_argument("--device", default="cpu", help="torch device for --array torch (default: cpu)")
    fpp.add_argument("--form", choices=FORMS, default="apply",
                     help="apply f(x, positions) (default); table table(positions) -> (cos, sin), probed through the "
                          "RoPE its table defines; kernel or qk, probed with ropespec's exact table (what they show "
                          "is their pairing, direction and rotary dims: the frequencies are ropespec's); vllm")
    _layout_options(fpp)
    _timeouts(fpp)
    fpp.add_argument("--json", metavar="PATH", help="write the fingerprint as JSON")

    sp_ = sub.add_parser("spec", help="render the executable spec (Markdown or self-contained HTML)",
                         description="Render every invariant with statement, formula, proof status, the properties "
                                     "that check it and the zoo members that fail it, plus the tutorial facts.")
    sp_.add_argument("--format", choices=("md", "html"), default="md")
    sp_.add_argument("--impl", metavar="TARGET", help="also show this implementation's verdict per invariant")
    sp_.add_argument("--expect", metavar="PRESET|JSON|FILE", help=f"the expectation for --impl: {EXPECT_HELP}")
    sp_.add_argument("--array", choices=arrays.ARRAYS, help="how x is handed to --impl")
    sp_.add_argument("--dtype", choices=DTYPES, help="dtype for --impl")
    sp_.add_argument("--seed", type=int, default=0, help="seed of the --impl check (default: 0)")
    sp_.add_argument("--out", metavar="PATH", help="write here instead of standard output")

    pf = sub.add_parser("proofs", help="run every proof of the spec: kind, result, time, mutations it fails under",
                        description="Run every proof in spec/proofs.py on the code's own definitions, and each proven one "
                                    "under the mutations of what it is about (it must fail under every one). Prints "
                                    "invariant, kind, result, seconds and mutations failed; exit 0 when every proof "
                                    "verifies and fails under all its mutations, 1 otherwise.")
    pf.add_argument("--record", metavar="PATH", help="also write the results, date and commit as JSON (ropespec spec "
                                                     "renders docs/proofs.json)")
    pf.add_argument("--no-mutants", action="store_true", help="skip the mutations (faster)")

    sub.add_parser("invariants", help="list the invariants with their statements",
                   description="List every invariant of the registry (spec/invariants.py) with its statement.")

    sub.add_parser("presets", help="list the model presets --expect accepts",
                   description="List the model presets that --expect accepts, with their expectations.")

    pr = sub.add_parser("precision", help="sweep positions and report up to where each tolerance class holds",
                        description="Sweep odd positions log-spaced up to --max-position (or, with --exhaustive, "
                                    "every position); measure the error against the exact reference; report up to "
                                    "which position each tolerance class holds. Exit codes: 0 the declared class held "
                                    "at every position measured; 1 it did not (or TARGET failed to run); 2 bad usage.")
    pr.add_argument("target", nargs="?", metavar="TARGET", help="default: the shipped numpy implementation")
    pr.add_argument("--expect", metavar="PRESET|JSON|FILE", help=f"the expectation: {EXPECT_HELP} (default: head_dim 128, theta 1e4, half)")
    pr.add_argument("--array", choices=arrays.ARRAYS, help="how x is handed to TARGET (default: numpy)")
    pr.add_argument("--dtype", choices=DTYPES, help="dtype of x and of the output (default: float32)")
    pr.add_argument("--max-position", type=int, default=2**31, metavar="N", help="sweep up to N-1 (default: 2^31)")
    pr.add_argument("--per-octave", type=int, default=2, metavar="K", help="positions per doubling (default: 2)")
    pr.add_argument("--vectors", type=int, default=4, metavar="V", help="random vectors per position (default: 4)")
    pr.add_argument("--seed", type=int, default=0, help="seed of the random vectors (default: 0)")
    pr.add_argument("--device", default="cpu", help="torch device for --array torch (default: cpu)")
    pr.add_argument("--form", choices=FORMS, default="apply",
                    help="which function TARGET is, as for check (table: swept through the RoPE its table defines; "
                         "kernel, qk: with ropespec's exactly rounded table, so the error is the kernel's own)")
    _layout_options(pr)
    _timeouts(pr)
    pr.add_argument("--exhaustive", action="store_true",
                    help="call TARGET on every position 0 .. N-1 (--max-position N, at most 2^27), a random vector "
                         "each, and compare every output with reference.fast: the exact first position where each "
                         "class fails, and the worst one")
    pr.add_argument("--chunk", type=int, default=8192, metavar="K",
                    help="with --exhaustive: positions per call (default 8192; memory grows with it)")
    pr.add_argument("--plot", metavar="PATH.png", help="draw error vs position with the bounds (needs matplotlib)")
    pr.add_argument("--json", metavar="PATH", help="write the sweep as JSON (schema in README)")
    return ap


def _lab(args: argparse.Namespace, console: Console) -> int:
    from implementations.contract import TargetError
    from ropespec import lab

    if args.targets:
        raise UsageError("--module grades a lab module: give no TARGET with it")
    outputs = _plan(args, **{"--json": args.json})
    outputs.clear()
    try:
        results = lab.grade(args.module, seed=args.seed or 0, timeout=check_seconds("--timeout", args.timeout),
                            warmup_timeout=check_seconds("--warmup-timeout", args.warmup_timeout))
    except TargetError as e:
        raise UsageError(f"--module {e}") from None
    console.print(f"ropespec check --module {args.module}: the lab's functions, graded", highlight=False, markup=False)
    for r in results:
        word = f" [{r.diagnosis}]" if r.diagnosis else ""
        console.print(f"  {r.property:<24} {r.status:<5}{word} {r.message}".rstrip(), highlight=False, markup=False)
    passed = sum(r.status == "pass" for r in results)
    console.print(f"{passed} passed, {len(results) - passed} failed", highlight=False)
    unwritten = _written(outputs, "--json", _json({"passed": passed == len(results), "module": args.module,
                                                    "results": [r.to_json() for r in results]}))
    return unwritten or (0 if passed == len(results) else 1)


#: the forms of RoPE code --form takes
FORMS = ("apply", "table", "kernel", "qk", "vllm")


def _layout_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layout", choices=[name for name in LAYOUTS if name != "vllm"], default="nd",
                   help="how an apply function takes its rows: nd f(x (n, d), positions (n,)) (default); bshd, bhsd, "
                        "sbhd f(x, positions (batch, seq)); thd f(x (tokens, heads, d), offsets (sequences,), "
                        "cu_seqlens=...), a packed batch whose token j of sequence i is at offsets[i] + j - "
                        "cu_seqlens[i]")
    p.add_argument("--table", metavar="TARGET",
                   help="with --form kernel or qk: the library's own table builder table(positions) -> (cos, sin) (a "
                        "function or a factory), and the two are checked together as one apply function, "
                        "f(x, positions) = kernel(x, *table(positions)), by every apply property")
    p.add_argument("--inplace", action="store_true",
                   help="the function writes its result into x (vllm: into query and key): x after the call is "
                        "checked, and nothing outside it may change")


def _shape(args: argparse.Namespace) -> dict:
    """What the properties call (:func:`ropespec.inputs.call_shape`), from the options this command has."""
    return call_shape(family=getattr(args, "family", "rope"), form=getattr(args, "form", "apply"),
                      layout=getattr(args, "layout", "nd"), inplace=getattr(args, "inplace", False),
                      table=getattr(args, "table", None))


#: a property running this long is said to be running on stderr when the output is piped
LONG_PROPERTY_S = 5.0


def _check(args: argparse.Namespace, console: Console) -> int:
    if args.module:
        return _lab(args, console)
    expect = parse_expect(args.expect)
    outputs = plan({"--json": args.json, "--junit": args.junit},
                   input_files([*args.targets, *([args.table] if args.table else [])], expect=args.expect))
    if outputs.to_stdout:  # standard output carries the report file: the text goes to standard error
        console = GuardedConsole(file=sys.stderr, soft_wrap=True, emoji=False)
    try:
        props = api.select_properties(args.invariant)
    except ValueError as e:
        raise UsageError(str(e)) from None
    replay = parse_replay(args.replay)
    if args.jobs < 1:
        raise UsageError(f"-j: must be >= 1, got {args.jobs}")
    notes: list[str] = []
    specs = subject_specs(args.targets, expect=expect, array=args.array, dtype=args.dtype,
                          max_position=args.max_position, device=args.device, timeout=args.timeout,
                          warmup_timeout=args.warmup_timeout, memory_limit=args.memory_limit, notes=notes,
                          **_shape(args))
    jobs = args.jobs if args.force_jobs else min(args.jobs, len(specs), os.cpu_count() or 1)
    if jobs < args.jobs:
        notes.append(f"checked in {jobs} process{'es' * (jobs > 1)} (-j {args.jobs} capped at the number of "
                     f"implementations and of cores; --force-jobs uses {args.jobs})")
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    outputs.clear()  # from here on a report path holds this run's report or nothing
    reports: list = []
    total = len(specs) * len(props)
    interrupted, error = None, None
    piped = not console.is_terminal

    def finished(rep) -> None:  # piped (CI logs): one line per implementation as it finishes
        if piped:
            counts = {k: sum(r.status == k for r in rep.results if r.applicable) for k in ("pass", "fail", "skip")}
            print(f"ropespec: {rep.subject.name}: {counts['pass']} passed, {counts['fail']} failed, "
                  f"{counts['skip']} skipped", file=sys.stderr, flush=True)

    said: dict = {}

    def running(implementation: str, invariant: str, text: str, seconds: float) -> None:
        """A long property's progress: the bar's text on a terminal; piped, a line on stderr once it has run
        LONG_PROPERTY_S seconds, and again every 2 LONG_PROPERTY_S."""
        if not piped:
            # what is running and how far first: a narrow terminal cuts the end of the line
            progress.update(task, description=f"{invariant}: {text} ({implementation})")
            return
        key = (implementation, invariant)
        if seconds >= LONG_PROPERTY_S and seconds - said.get(key, -LONG_PROPERTY_S) >= 2 * LONG_PROPERTY_S:
            said[key] = seconds
            print(f"ropespec: {implementation}: {invariant} still running after {seconds:.0f} s ({text})",
                  file=sys.stderr, flush=True)

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=piped) as progress:
        task = progress.add_task("checking", total=total)
        advance = lambda r: progress.update(task, advance=1, description=f"{r.implementation} {r.invariant}")
        try:
            if jobs > 1:
                ids = list(args.invariant) if args.invariant else None
                api.check_in_processes(specs, ids, profile=args.profile, seed=seed, replay=replay, jobs=jobs,
                                       on_result=advance, on_subject=finished, on_progress=running, into=reports)
            else:  # each implementation is loaded just before it is checked, and stopped after
                api.check_subjects(_loaded(specs, args.allow_skip), props, profile=args.profile, seed=seed,
                                   replay=replay, on_result=advance, on_subject=finished, on_progress=running,
                                   into=reports)
        except TargetError as e:
            error = f"TARGET {e}"
        except UsageError as e:
            error = str(e)
        except KeyboardInterrupt as e:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the report short
            interrupted = "terminated" if isinstance(e, Terminated) else "interrupted"
    result = api.CheckResult(reports, seed, args.profile, allow_skip=args.allow_skip, explicit=bool(args.targets),
                             interrupted=interrupted, error=error)
    # the report files first: whatever then happens to the terminal (a closed pipe, a Ctrl-C), they are whole; a
    # run that stopped before anything was checked (the first TARGET does not load) leaves none
    unwritten = [] if error is not None and not reports else [
        w for w in (outputs.write("--json", report.json_text(result)), outputs.write("--junit", report.junit_text(result)))
        if w]
    for note in notes:
        console.print(note, highlight=False, markup=False)
    if reports or error is None:  # a first TARGET that does not load: its one line says it all
        report.render(reports, console, seed=seed, profile=args.profile,
                      values=f"in {args.json}" if outputs.get("--json") else "rerun with --json PATH")
    for line in unwritten:
        print(f"ropespec: error: {line}", file=sys.stderr)
    if interrupted is not None:
        print(f"ropespec: {interrupted}: the report above holds the {result.finished} checks that finished",
              file=sys.stderr)
        return 143 if interrupted == "terminated" else 130
    if error is not None:
        print(f"ropespec: error: {error}", file=sys.stderr)
        return 2
    code = result.exit_code
    if code == 2:
        for line in result.nothing_checked() or ["nothing was checked"]:
            print(f"ropespec: error: {line} (--allow-skip accepts this)", file=sys.stderr)
    return 2 if unwritten else code


def _loaded(specs: list[dict], allow_skip: bool):
    """The subjects, loaded one at a time. An implementation that cannot run here at all (numpy asked
    for bfloat16, no CUDA, a factory declining the expectation) is bad usage before it runs (exit 2)."""
    for spec in specs:
        s = make_subject(**spec)
        if s.skip_reason and not allow_skip:
            raise UsageError(f"nothing can be checked on {s.name}: {s.skip_reason} (--allow-skip accepts this)")
        yield s


def _plan(args: argparse.Namespace, **options: str | None):
    """The command's report paths, checked before anything runs against what it reads (its TARGET and the modules
    that imports from its folder, --table, --expect, --module, --impl) and against each other."""
    targets = [t for t in (getattr(args, "target", None), getattr(args, "table", None), getattr(args, "impl", None))
               if t] + list(getattr(args, "targets", None) or [])
    return plan(options, input_files(targets, expect=getattr(args, "expect", None), module=getattr(args, "module", None)))


def _json(data: dict) -> str:
    import json

    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def _written(outputs, option: str, text: str) -> int:
    """Write one report: 0, or 2 with one line when it could not be written (a full disk, a closed pipe)."""
    problem = outputs.write(option, text)
    if problem:
        print(f"ropespec: error: {problem}", file=sys.stderr)
        return 2
    return 0


def _precision(args: argparse.Namespace, console: Console) -> int:
    from spec import DEFAULT

    expect = parse_expect(args.expect)
    if args.max_position < 2:
        raise UsageError(f"--max-position: must be >= 2, got {args.max_position}")
    if args.per_octave < 1 or args.vectors < 1:
        raise UsageError("--per-octave and --vectors must be >= 1")
    if args.exhaustive:
        if args.max_position > EXHAUSTIVE_MAX:
            raise UsageError(f"--max-position: with --exhaustive at most 2^27 = {EXHAUSTIVE_MAX} positions (every one "
                             f"is called and compared), got {args.max_position}")
        if not 1 <= args.chunk <= 1 << 20:
            raise UsageError(f"--chunk: must be between 1 and 1048576, got {args.chunk}")
        if args.plot:
            raise UsageError("--plot: draws the sampled sweep; drop it with --exhaustive")
    target = args.target or "implementations.numpy_rope:make"
    outputs = _plan(args, **{"--json": args.json})
    if outputs.to_stdout:
        console = GuardedConsole(file=sys.stderr, soft_wrap=True, emoji=False)
    outputs.clear()
    [subject] = build_subjects([target], expect=expect or DEFAULT, array=args.array, dtype=args.dtype,
                               max_position=args.max_position, device=args.device, timeout=args.timeout,
                               warmup_timeout=args.warmup_timeout, memory_limit=args.memory_limit, **_shape(args))
    try:
        return _precision_of(subject, target, args, console, outputs)
    finally:
        subject.close()


def _bound(subject, target: str, console: Console):
    """The subject's function for its expectation; UsageError when it cannot run here or declines."""
    if subject.skip_reason:
        raise UsageError(f"TARGET {target}: {subject.skip_reason}")
    try:
        return subject.function(subject.expect)
    except Failure:
        raise
    except Exception as ex:  # Unsupported: the factory declines this expectation
        raise UsageError(f"TARGET {target}: cannot build for {subject.expect.describe()}: {ex}") from None


def _precision_of(subject, target: str, args, console: Console, outputs) -> int:
    from properties import precision

    e = subject.expect
    try:
        f = _bound(subject, target, console)
    except Failure as ex:
        console.print(f"{target}: {ex.message}" + (f" [{ex.diagnosis}]" if ex.diagnosis else ""),
                      highlight=False, markup=False)
        return 1
    if args.exhaustive:
        return _exhaustive(f, e, target, args, console, outputs)
    positions = precision.sweep_positions(e.max_position, per_octave=args.per_octave)
    sw = _with_progress(console, target, "sweeping positions", len(positions), lambda progress: precision.measure(
        f, e, positions, vectors=args.vectors, seed=args.seed, progress=progress))
    if sw is None:
        return 1
    report.render_precision(sw, console, target)
    if args.plot:
        from ropespec.plots import precision_plot

        try:
            precision_plot(sw, args.plot, f"{target}: {e.describe()}")
        except RuntimeError as ex:
            raise UsageError(str(ex)) from None
        console.print(f"plot written to {args.plot}", highlight=False)
    unwritten = _written(outputs, "--json", _json(sw.to_json()))
    bad = [int(p) for p, r in zip(sw.positions, sw.ratio[precision.class_of(e)]) if r > 1.0]
    nonfinite = [int(p) for p, n in zip(sw.positions, sw.nonfinite if sw.nonfinite is not None else []) if n]
    return unwritten or _verdict(console, e, bad[0] if bad else None, nonfinite[0] if nonfinite else None, "swept position")


def _verdict(console: Console, e, first_failure: int | None, nonfinite_at: int | None, what: str) -> int:
    """precision's exit code, said in its last line: 0 when the class the expectation declares held at every
    position measured, 1 when it did not (exit 0 means it all held, as for ropespec check)."""
    from spec import tolerance

    where = [p for p in (first_failure, nonfinite_at) if p is not None]
    if not where:
        console.print(f"the declared class ({tolerance.class_name(e)}) held at every {what}: exit 0", highlight=False)
        return 0
    console.print(f"the declared class ({tolerance.class_name(e)}) fails from p = {min(where)} (the first {what} "
                  f"where it does): exit 1", highlight=False)
    return 1


def _with_progress(console: Console, target: str, label: str, total: int, run):
    """``run(progress)`` under a progress bar (on a terminal only); a Failure of the target is printed as
    one line and gives None."""
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=total)
        try:
            return run(lambda k: bar.update(task, advance=k))
        except Failure as ex:
            console.print(f"{target}: {ex.message}" + (f" [{ex.diagnosis}]" if ex.diagnosis else ""),
                          highlight=False, markup=False)
            return None


EXHAUSTIVE_MAX = 1 << 27


def _exhaustive(f, e, target: str, args, console: Console, outputs) -> int:
    from properties import precision

    # on a GPU the outputs are compared there (double-double reference and bounds in torch); else in numpy
    device = args.device if args.array == "torch" and args.device != "cpu" else None
    ex = _with_progress(console, target, "every position", e.max_position, lambda progress: precision.exhaustive(
        f, e, e.max_position, chunk=args.chunk, seed=args.seed, progress=progress, device=device))
    if ex is None:
        return 1
    report.render_exhaustive(ex, console, target)
    unwritten = _written(outputs, "--json", _json(ex.to_json()))
    return unwritten or _verdict(console, e, ex.first_failure[precision.class_of(e)], ex.nonfinite_at, "position")


def _fingerprint(args: argparse.Namespace, console: Console) -> int:
    from ropespec.fingerprints import describe, fingerprint
    from spec import DEFAULT

    expect = parse_expect(args.expect) or DEFAULT
    outputs = _plan(args, **{"--json": args.json})
    if outputs.to_stdout:
        console = GuardedConsole(file=sys.stderr, soft_wrap=True, emoji=False)
    outputs.clear()
    [subject] = build_subjects([args.target], expect=expect, array=args.array, dtype=args.dtype,
                               max_position=args.max_position, device=args.device, timeout=args.timeout,
                               warmup_timeout=args.warmup_timeout, memory_limit=args.memory_limit, **_shape(args))
    try:
        fp = fingerprint(_bound(subject, args.target, console), subject.expect)
    except Failure as ex:
        console.print(f"{args.target}: {ex.message}" + (f" [{ex.diagnosis}]" if ex.diagnosis else ""),
                      highlight=False, markup=False)
        return 1
    finally:
        subject.close()
    console.print(f"ropespec fingerprint: {args.target} (head_dim {fp.head_dim}, {subject.dtype}, probed to "
                  f"p = {subject.expect.max_position - 1})", highlight=False, markup=False)
    for line in describe(fp):
        console.print(f"  {line}", highlight=False, markup=False)
    if subject.kind in ("kernel", "qk"):
        console.print(f"  (--form {subject.kind}: the kernel was handed ropespec's table for the expectation, so the "
                      f"frequencies, base, curve and presets are that table's; pairing, rotary dim, direction and "
                      f"precision are the kernel's)", highlight=False, markup=False)
    return _written(outputs, "--json", _json(fp.to_json()))


def _spec(args: argparse.Namespace, console: Console) -> int:
    from ropespec import specdoc

    outputs = _plan(args, **{"--out": args.out})
    to_file = outputs.get("--out") is not None and outputs.get("--out").path is not None
    verdicts, subject = None, None
    if args.impl:
        result = api.check(args.impl, args.expect, array=args.array, dtype=args.dtype, seed=args.seed)
        verdicts = {}
        for r in result.results:
            if not r.applicable:
                continue
            word = r.status if r.status != "fail" else f"fail ({r.diagnosis})"
            verdicts[r.invariant] = word if verdicts.get(r.invariant, "pass") == "pass" else verdicts[r.invariant]
        subject = args.impl + (f" --expect {args.expect}" if args.expect else "")
    text = (specdoc.html_doc if args.format == "html" else specdoc.markdown)(
        verdicts, subject, specdoc.seeds_link(args.out if to_file else None))
    if not to_file:
        sys.stdout.write(text)
        return 0
    code = _written(outputs, "--out", text)
    if not code:
        console.print(f"wrote {args.out}", highlight=False, markup=False)
    return code


def _git_commit() -> str:
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "spec"], cwd=root, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (" with uncommitted changes to spec/" if dirty else "")


def _proofs(args: argparse.Namespace) -> int:
    import datetime
    import json
    import time
    from pathlib import Path

    import sympy

    from spec import proofs

    if args.record and args.no_mutants:
        raise UsageError("--record: run with the mutations (drop --no-mutants), the record states them")
    t0 = time.perf_counter()
    results, failed = {}, 0
    print(f"{'proof':<36} {'kind':<18} {'result':<9} {'seconds':>7}  mutations failed under")
    for o in proofs.run_all():
        pr = proofs.ALL[o.id]
        killed = None
        if pr.fn is not None and pr.about and not args.no_mutants and o.ok:
            survived = [mu for mu in pr.about if proofs.holds_under(o.id, mu)]
            killed = [len(pr.about) - len(survived), len(pr.about)]
            if survived:
                o.ok, o.account = False, f"still verifies with {', '.join(survived)}: it does not prove what it claims"
        result = ("verified" if o.ok else "FAILED") if pr.fn is not None else "-"
        failed += not o.ok
        muts = f"{killed[0]}/{killed[1]}" if killed else ("-" if pr.fn is None or args.no_mutants else "")
        print(f"{o.id:<36} {o.kind:<18} {result:<9} {o.seconds:7.2f}  {muts}", flush=True)
        if not o.ok:
            print(f"    {o.account}")
        results[o.id] = {"kind": o.kind, "ok": o.ok, "account": o.account, "seconds": round(o.seconds, 3),
                         **({"mutants": killed} if killed else {})}
    total = time.perf_counter() - t0
    proven = sum(1 for pr in proofs.ALL.values() if pr.fn is not None)
    print(f"{len(results)} entries, {proven} proofs: {proven - failed} verified, {failed} failed; "
          f"{len(results) - proven} definition or tested only; {total:.1f} s")
    if args.record:
        record = {"verified_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "commit": _git_commit(), "sympy": sympy.__version__, "seconds": round(total, 1), "results": results}
        Path(args.record).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {args.record}")
    return 1 if failed else 0


def _golden(args: argparse.Namespace, console: Console) -> int:
    from reference import golden

    from spec.expectation import MAX_POSITION_MAX

    expect = parse_expect(args.expect)
    outputs = _plan(args, **{"--out": args.out})
    try:
        positions = [int(p) for p in args.positions.split(",") if p.strip()]
    except ValueError:
        raise UsageError(f"--positions: expected comma-separated integers, got {args.positions!r}") from None
    if not positions or min(positions) < 0 or max(positions) >= MAX_POSITION_MAX:
        raise UsageError(f"--positions: expected integers in [0, 2^53 = {MAX_POSITION_MAX}), got {args.positions!r}")
    code = _written(outputs, "--out", golden.text(golden.make(expect, positions, seed=args.seed)))
    if not code:
        console.print(f"wrote {len(positions)} rows of {expect.describe()} to {args.out}", highlight=False, markup=False)
    return code


def _presets(console: Console) -> int:
    from spec import presets

    for name in presets.names():
        e = presets.get(name)
        line = f"{name:<16} {e.describe()}, max_position {e.max_position}"
        if e.rope_scaling:
            extra = {k: v for k, v in e.to_dict()["rope_scaling"].items() if k != "rope_type"}
            line += f" {extra}"
        if name in presets.NOTES:
            line += f"  ({presets.NOTES[name]})"
        if name in presets.UNVERIFIED:
            line += f"  [unverified: {presets.UNVERIFIED[name]}]"
        console.print(line, highlight=False, markup=False)
    return 0


class GuardedConsole(Console):
    """A console whose reader may go away (``| head -1``): the rest of the text goes nowhere, and the command goes on
    to its reports and its verdict's exit code (rich's own handling ends the process with exit 1, "an invariant
    failed")."""

    closed = False

    def on_broken_pipe(self) -> None:
        self.quiet = True
        GuardedConsole.closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
        except (OSError, ValueError, AttributeError):
            pass


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI runners and timeout(1) send): stop like Ctrl-C, exit 143."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "check":  # TARGETs after an option: check a.py:f --invariant ID b.py:g
        stray = [a for a in extra if a.startswith("-")]
        if stray:
            parser.error(f"unrecognized arguments: {' '.join(stray)}")
        args.targets = [*args.targets, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    console = GuardedConsole(soft_wrap=True, emoji=False)  # ":llama:" in a TARGET is not an emoji
    saved = None
    if threading_main():  # Ctrl-C and SIGTERM stop the run and print what finished (even when started
        # in the background with SIGINT ignored); the caller's handlers come back afterwards
        saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _command(args, console)
    finally:
        if saved is not None:
            signal.signal(signal.SIGINT, saved[0])
            signal.signal(signal.SIGTERM, saved[1])


def _command(args: argparse.Namespace, console: Console) -> int:
    try:
        if args.command == "check":
            return _check(args, console)
        if args.command == "precision":
            return _precision(args, console)
        if args.command == "presets":
            return _presets(console)
        if args.command == "fingerprint":
            return _fingerprint(args, console)
        if args.command == "spec":
            return _spec(args, console)
        if args.command == "proofs":
            return _proofs(args)
        if args.command == "invariants":
            from spec.invariants import REGISTRY

            for inv in REGISTRY.values():
                console.print(f"{inv.id:<28} {inv.statement}", highlight=False, markup=False)
            return 0
        if args.command == "golden":
            return _golden(args, console)
    except ExpectationError as e:  # "expect" names the whole expectation, which --expect already says
        print(f"ropespec: error: --expect: {e.problem if e.field == 'expect' else e}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"ropespec: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        terminated = isinstance(e, Terminated)
        print(f"ropespec: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130
    return 2


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
