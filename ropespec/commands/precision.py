"""``ropespec precision``: the error against the exact reference swept over positions (or at every position, with
--exhaustive), and up to where each tolerance class holds; exit 0 when the declared class held everywhere."""

from __future__ import annotations

import math
import shlex

import numpy as np

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ropespec.implementations.contract import Failure
from ropespec.properties import diagnose, precision
from ropespec.properties.exhaustive import exhaustive
from ropespec.properties.precision import describe_position
from ropespec import report
from ropespec.commands import options
from ropespec.console import console as console_for, say
from ropespec.inputs import UsageError, load_implementations, parse_expect, with_rope
from ropespec.request import SWEEP_TO, PrecisionRequest
from ropespec.plots import precision_plot
from ropespec.spec import DEFAULT, tolerance
from ropespec.spec.schema import MAX_POSITION_MAX

NAME = "precision"
#: the most positions --exhaustive calls and compares
EXHAUSTIVE_MAX = 1 << 27


def add(sub) -> None:
    PrecisionRequest.add_arguments(sub.add_parser(
        NAME, help="sweep positions and report up to where each tolerance class holds",
        description="Sweep odd positions log-spaced up to --sweep-to (or, with --exhaustive, every position below "
                    "--max-position); measure the error against the exact reference; report up to which position each "
                    "tolerance class holds. The verdict is about the positions the model uses, those below "
                    "max_position (the expectation's, or --max-position); the sweep past them is information. Exit "
                    "codes: 0 the declared class held at every position measured below max_position; 1 it did not (or "
                    "TARGET failed to run there); 2 bad usage."))


def run(req: PrecisionRequest, console: Console) -> int:
    expect = parse_expect(req.expect)
    with_rope(expect, "rope", "the precision sweep")
    domain = req.max_position if req.max_position is not None else (expect or DEFAULT).max_position
    if domain < 2:
        raise UsageError(f"--max-position: must be >= 2, got {domain}")
    if not req.exhaustive and not domain <= req.sweep_to <= MAX_POSITION_MAX:
        raise UsageError(f"--sweep-to: must be an integer in [max_position {domain}, 2^53 = {MAX_POSITION_MAX}], got "
                         f"{req.sweep_to}")
    if req.per_octave < 1 or req.vectors < 1:
        raise UsageError("--per-octave and --vectors must be >= 1")
    if (req.atol is None) != (req.rtol is None):
        raise UsageError("--atol and --rtol: give both, as torch.testing.assert_close takes them, or neither")
    if req.atol is not None and not (req.atol >= 0 and req.rtol >= 0 and math.isfinite(req.atol + req.rtol)):
        raise UsageError(f"--atol and --rtol: must be finite numbers >= 0, got atol {req.atol}, rtol {req.rtol}")
    if req.exhaustive:
        if req.atol is not None:
            raise UsageError("--atol/--rtol: measured by the sampled sweep; drop them with --exhaustive")
        if domain > EXHAUSTIVE_MAX:
            raise UsageError(f"--max-position: with --exhaustive at most 2^27 = {EXHAUSTIVE_MAX} positions (every one "
                             f"is called and compared), got {domain}")
        if req.sweep_to != SWEEP_TO:
            raise UsageError("--sweep-to: ends the sampled sweep; --exhaustive calls every position below "
                             "--max-position")
        if not 1 <= req.chunk <= 1 << 20:
            raise UsageError(f"--chunk: must be between 1 and 1048576, got {req.chunk}")
        if req.plot:
            raise UsageError("--plot: draws the sampled sweep; drop it with --exhaustive")
    target = req.target or "ropespec.implementations.numpy_rope:make"
    outs = req.outputs(**{"--json": req.json})
    if outs.to_stdout:
        console = console_for(to_stderr=True)
    outs.clear()
    # the implementation is told the positions it is called at: past the domain when the sweep goes there
    within = (expect or DEFAULT).replace(max_position=domain)
    measured = within if req.exhaustive else precision.swept_past(within, req.sweep_to)
    [impl] = load_implementations([target], expect=measured, **{**req.loading(), "max_position": None})
    try:
        try:
            f = options.function_of(impl, target)
        except Failure as ex:
            return options.failed_to_run(console, target, ex)
        return (_exhaustive if req.exhaustive else _sweep)(f, impl.expect, target, req, console, outs, domain)
    finally:
        impl.close()


def _sweep(f, e, target: str, req, console: Console, outs, domain: int) -> int:
    """The sampled sweep of ``f`` under ``e`` (whose max_position is where the sweep ends): the verdict is about the
    positions below ``domain``; past it the sweep is information (and code that cannot be called there is said, not
    judged)."""
    # the domain swept to its last position, as a sweep of it alone is; then on past it to the sweep's end
    inside = precision.sweep_positions(domain, per_octave=req.per_octave)
    past = precision.sweep_positions(e.max_position, per_octave=req.per_octave)
    positions = np.concatenate([inside, past[past > inside[-1]]])
    allclose = (req.atol, req.rtol) if req.atol is not None else None
    measure = lambda at: lambda progress: precision.measure(  # noqa: E731
        f, e, at, vectors=req.vectors, seed=req.seed, progress=progress, allclose=allclose)
    beyond_failed = None
    try:
        sw = _with_progress(console, target, "sweeping positions", len(positions), measure(positions), quiet=True)
    except Failure as ex:  # past the domain the code may end (a table of max_position rows): the domain is measured
        inside = positions[positions < domain]
        if len(inside) == len(positions):
            return options.failed_to_run(console, target, ex)
        beyond_failed = ex.message
        sw = _with_progress(console, target, "sweeping positions", len(inside), measure(inside))
    if sw is None:
        return 1
    sw.expect, sw.domain = e.replace(max_position=domain), domain
    report.render_precision(sw, console, target)
    if beyond_failed is not None:
        say(console, f"beyond max_position {domain} the code could not be called ({beyond_failed}): the sweep ends "
                     f"there, and the verdict is about the positions below it")
    if req.plot:
        try:
            precision_plot(sw, req.plot, f"{target}: {e.describe()}")
        except RuntimeError as ex:
            raise UsageError(str(ex)) from None
        say(console, f"plot written to {req.plot}")
    unwritten = options.written(outs, "--json", options.json_text(sw.to_json()))
    declared = precision.class_of(sw.expect)
    first, nonfinite = sw.first_failure(declared, within=True), sw.first_nonfinite(within=True)
    noise = sw.promises_until(declared) if first is not None and sw.is_noise(declared, first) else None
    if sw.beyond():  # information first: the verdict is the last line
        _past_the_domain(console, sw, declared)
    code = unwritten or _verdict(console, sw.expect, first, nonfinite, "swept position", noise,
                                 decides=allclose is None, below=domain if sw.beyond() else None)
    if first is not None:
        _source(console, f, sw.expect, target, req)
    if allclose is not None:  # the user's own question: its answer is the exit code
        exceeded = sw.allclose_first_exceeded(within=True)
        said = f"atol {req.atol:g}, rtol {req.rtol:g} (torch.testing.assert_close's |actual - expected| <= atol + " \
               f"rtol |expected|)"
        inside = sw.positions[sw.in_domain()]
        if exceeded is None:
            say(console, f"your tolerance, {said}: held at every swept position, to p = {int(inside[-1])} (worst "
                         f"{float(np.max(sw.allclose_ratio[sw.in_domain()])):.3g} of it): exit 0")
            return unwritten or 0
        i = int(np.argmax(np.where(sw.in_domain(), sw.allclose_ratio, -np.inf)))
        held = int(inside[list(inside).index(exceeded) - 1]) if exceeded != int(inside[0]) else None
        say(console, f"your tolerance, {said}: first exceeded at p = {exceeded}"
                     + (f", held to p = {held}" if held is not None else ", not held even at the first position")
                     + f"; worst {float(sw.allclose_ratio[i]):.3g} times it, at p = {int(sw.positions[i])}: exit 1")
        return unwritten or 1
    return code


def _past_the_domain(console: Console, sw, declared: str) -> None:
    """What the sweep measured past max_position, said as information: where the declared class stops holding
    there, or that it held to the end of the sweep."""
    last = int(sw.positions[-1])
    fails, until = report.failure_words(sw, declared), sw.promises_until(declared)
    if sw.first_failure(declared, within=True) is not None:
        return  # it failed where the model runs: what follows past it adds nothing to the verdict
    promises = f"it promises nothing past {describe_position(until)}" if until is not None else None
    if fails is None:
        past = (f"{promises}, yet its error stays below the pair's norm (a rotation, not noise) to the end of the sweep "
                f"(p = {last})" if promises else
                f"it holds there to the end of the sweep (p = {last})")
    else:
        past = f"its output is {fails}" if fails.startswith("noise") else f"it {fails}"
        past += f" ({promises})" if promises else ""
    say(console, f"beyond max_position {sw.domain}, to p = {last} (information, not the verdict): {past}")


def _exhaustive(f, e, target: str, req, console: Console, outs, domain: int) -> int:
    # on a GPU the outputs are compared there (double-double reference and bounds in torch); else in numpy
    device = req.device if req.array == "torch" and req.device != "cpu" else None
    ex = _with_progress(console, target, "every position", e.max_position, lambda progress: exhaustive(
        f, e, e.max_position, chunk=req.chunk, seed=req.seed, progress=progress, device=device))
    if ex is None:
        return 1
    report.render_exhaustive(ex, console, target)
    unwritten = options.written(outs, "--json", options.json_text(ex.to_json()))
    declared = precision.class_of(e)
    first, until = ex.first_failure[declared], ex.promises_until(declared)
    noise = until if first is not None and until is not None and first > until else None
    code = unwritten or _verdict(console, e, first, ex.nonfinite_at, "position", noise)
    if first is not None:
        _source(console, f, e, target, req)
    return code


def _source(console: Console, f, e, target: str, req) -> None:
    """What a failing error is from, where the evidence check uses says it is not rounding: a structural fault or
    frequencies that are not the expectation's (another base, a scaling method, an offset), and the command that
    checks it. Said after the verdict; silent where no model fits (rounding is precision's own subject)."""
    found = diagnose.root_cause(f, e) or diagnose.frequency_fault(f, e)
    if not found:
        return
    word, evidence = found
    expect = f" --expect {shlex.quote(req.expect)}" if req.expect else ""
    assumed = "" if req.expect else (f" (without --expect precision assumes {DEFAULT.describe()}: if that is not "
                                      f"what the code means to compute, say what it does with --expect)")
    say(console, f"the error is not rounding: [{word}] {evidence}{assumed}; ropespec check {target}{expect} names "
                 f"every fault")


def _verdict(console: Console, e, first_failure: int | None, nonfinite_at: int | None, what: str,
             noise_past: int | None = None, decides: bool = True, below: int | None = None) -> int:
    """precision's exit code, said in its last line: 0 when the class the expectation declares held at every
    position measured, 1 when it did not (exit 0 means it all held, as for ropespec check). ``noise_past``: the
    failure is noise where the class promises nothing, past that position (its bound saturated there). ``decides``:
    False where a user's own tolerance (--atol, --rtol) decides the exit code instead, which the line then leaves
    unsaid."""
    def exits(code: int) -> str:
        return f": exit {code}" if decides else ""

    where = [p for p in (first_failure, nonfinite_at) if p is not None]
    if not where:
        domain = f" below max_position {below}" if below is not None else ""
        say(console, f"the declared class ({tolerance.class_name(e)}) held at every {what}{domain}{exits(0)}")
        return 0
    if noise_past is not None and min(where) == first_failure:
        say(console, f"the declared class ({tolerance.class_name(e)}) holds nowhere past {describe_position(noise_past)}"
                     f": its bound reaches twice the pair norm there, and the output is noise from p = "
                     f"{first_failure} (an error of the pair norm or more){exits(1)}")
        return 1
    say(console, f"the declared class ({tolerance.class_name(e)}) fails from p = {min(where)} (the first {what} "
                 f"where it does){exits(1)}")
    return 1


def _with_progress(console: Console, target: str, label: str, total: int, run, quiet: bool = False):
    """``run(progress)`` under a progress bar (on a terminal only); a Failure of the target is printed as
    one line and gives None (``quiet``: raised, for the caller to say)."""
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=total)
        try:
            return run(lambda k: bar.update(task, advance=k))
        except Failure as ex:
            if quiet:
                raise
            options.failed_to_run(console, target, ex)
            return None
