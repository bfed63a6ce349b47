"""``ropespec fingerprint``: what an implementation computes, inferred by probing it with basis vectors."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

from ropespec.implementations.contract import Failure
from ropespec.commands import options
from ropespec.console import console as console_for, say
from ropespec.bias_fingerprints import fingerprint_alibi, fingerprint_t5, fingerprint_xpos
from ropespec.implementations.boundary.targets import resolve
from ropespec.spec import families
from ropespec.properties.fingerprint import Fingerprint, fingerprint
from ropespec.inputs import UsageError, load_implementations, parse_expect
from ropespec.spec import DEFAULT

NAME = "fingerprint"


def add(sub) -> None:
    p = sub.add_parser(NAME, help="infer what an implementation computes, by probing it",
                       description="Probe TARGET with basis vectors and report its convention, rotary dim, frequencies, "
                                   "base, scaling curve, direction, offset, attention factor, precision and preset; "
                                   "with --family alibi, t5-bias or xpos, what the bias computes (ALiBi's slopes, their "
                                   "rule and the bias's form; T5's bucket boundaries; xPos's scale base and centres).")
    p.add_argument("target", metavar="TARGET")
    p.add_argument("--expect", metavar="PRESET|JSON",
                   help="builds a factory's function; only head_dim, dtype and max_position guide the probing")
    options.array(p)
    options.dtype(p, default="float32")
    p.add_argument("--max-position", type=int, metavar="N", help="probe positions up to N-1 (default: the expectation's)")
    options.device(p)
    options.shape(p, family=True, form_note="a table is probed through the RoPE its table defines; a kernel or qk function with "
                               "ropespec's exact table (what it shows is its convention, direction and rotary dims: "
                               "the frequencies are ropespec's)")
    options.limits(p)
    p.add_argument("--json", metavar="PATH", help="write the fingerprint as JSON (- for standard output)")


def run(args: argparse.Namespace, console: Console) -> int:
    expect = parse_expect(args.expect) or DEFAULT
    outs = options.outputs(args, **{"--json": args.json})
    if outs.to_stdout:
        console = console_for(to_stderr=True)
    outs.clear()
    probe = handler(getattr(args, "family", "rope"))
    [impl] = load_implementations([args.target], expect=expect, **options.loading(args))
    try:
        return probe(args, console, impl, outs)
    except Failure as ex:
        return options.failed_to_run(console, args.target, ex)
    finally:
        impl.close()


def handler(family: str):
    """What fingerprints an implementation of the family: its class's ``fingerprint``, a function
    ``(args, console, impl, outs) -> exit code``; UsageError for a family that has none."""
    fam = families.get(family)
    if not fam.fingerprint:
        raise UsageError(f"--family: ropespec fingerprint probes {', '.join(f.name for f in families.fingerprinted())}; "
                         f"got {fam.name!r}")
    return resolve({"target": fam.fingerprint})


def rope(args, console, impl, outs) -> int:
    """RoPE's fingerprint (ropespec.properties.fingerprint), from the implementation as f(x, positions)."""
    fp = fingerprint(options.function_of(impl, args.target), impl.expect)
    say(console, f"ropespec fingerprint: {args.target} (head_dim {fp.head_dim}, {impl.dtype}, probed to "
                 f"p = {impl.expect.max_position - 1})")
    for line in describe(fp):
        say(console, f"  {line}")
    if impl.shape.table is None and impl.form.handed_a_table:
        say(console, f"  (--form {impl.shape.form}: the kernel was handed ropespec's table for the expectation, so "
                     f"the frequencies, base, curve and presets are that table's; convention, rotary dim, direction "
                     f"and precision are the kernel's)")
    return options.written(outs, "--json", options.json_text(fp.to_json()))


def _bias(probe):
    """A bias family's fingerprint (ropespec.bias_fingerprints), from the implementation bound to its expectation."""

    def handler(args, console, impl, outs) -> int:
        fp = probe(options.function_of(impl, args.target, bound=True), impl.expect)
        family = impl.shape.family
        head = (f"ropespec fingerprint: {args.target} ({family}, {impl.dtype}, probed to "
                f"p = {impl.expect.max_position - 1})")
        tail = [f"reproduced by --expect '{json_compact(fp.expect)}'"] if fp.expect else []
        for i, line in enumerate([head, *fp.lines, *tail]):  # on a terminal rich wraps at words; piped, lines stay whole
            console.print(line if i == 0 else f"  {line}", highlight=False, markup=False,
                          soft_wrap=not console.is_terminal)
        return options.written(outs, "--json", options.json_text(fp.to_json()))

    return handler


alibi = _bias(fingerprint_alibi)
t5 = _bias(fingerprint_t5)
xpos = _bias(fingerprint_xpos)


def describe(fp: Fingerprint) -> list[str]:
    """The RoPE fingerprint as lines of text."""
    out = []
    if fp.problem:
        return [f"not a rotation of pairs of dims: {fp.problem}"]
    pass_through = fp.head_dim - fp.rotary_dim
    if fp.axes is not None:
        ax = fp.axes
        sizes = ax.get("mrope_section") or ax.get("axes_dims_rope")
        out.append(f"axes: {ax['n_axes']}, {ax['kind']}" + (f" {sizes}" if sizes else "")
                   + f"; pairs per axis {ax['pairs_per_axis']} (pair j's axis: {_axis_runs(ax['pair_axes'])})")
    out.append(f"convention: {fp.convention}" + (f" {fp.pairs[:4]}..." if fp.convention == "explicit" else "")
               + f"; rotary dim {fp.rotary_dim} of {fp.head_dim}" + (f" ({pass_through} dims pass through)" if pass_through else "")
               + (f"; {fp.turning} of its {fp.rotary_dim // 2} pairs turn, {fp.rotary_dim // 2 - fp.turning} stay still"
                  if fp.turning is not None else ""))
    out.append(f"direction: {fp.direction}; position offset: {fp.offset:.3g}; attention factor: {fp.attention_factor:.9g}")
    th = fp.thetas
    if th:
        out.append(f"frequencies: theta_0 = {th[0]:.12g}, theta_1 = {th[1] if len(th) > 1 else float('nan'):.12g}, ..., "
                   f"theta_{len(th) - 1} = {th[-1]:.12g} (relative precision {fp.precision:.1e})")
    if fp.base is not None:
        out.append(f"base: {fp.base:.10g} (ladder fit residual {fp.base_precision:.1e})"
                   + ("; the table changes with the sequence length" if fp.length_dependent else ""))
    if fp.curve == "ntk-or-default":
        out.append("curve: the default ladder (an NTK-aware table is the default ladder of a larger base)")
    elif (fp.curve == "unknown" or fp.switches) and not fp.scaling:
        out.append(f"curve: {fp.curve}" + (" (per-pair factors that change with the length)" if fp.switches else ""))
    else:
        out.append(f"curve: {fp.curve} {json_compact(fp.scaling)} (fits to {fp.curve_error:.1e})")
    if fp.precision_class is not None or fp.max_errors:
        errs = ", ".join(f"p={p}: {v:.2g}" for p, v in fp.max_errors.items())
        out.append(f"precision: {('strict' if fp.precision_class == 'exact' else (fp.precision_class or 'none') + ' angles')} "
                   f"class holds; max error / pair norm {errs}")
    if fp.presets:
        out.append(f"matches preset{'s' if len(fp.presets) > 1 else ''} {', '.join(fp.presets)}")
    elif fp.same_frequencies:
        names = ", ".join(fp.same_frequencies)
        theirs = " / ".join(sorted(set(fp.same_frequencies.values())))
        out.append(f"matches no preset as it is: it has the frequencies of {names}, but pairs {fp.convention} where "
                   f"{'that preset pairs' if len(fp.same_frequencies) == 1 else 'those presets pair'} {theirs} "
                   f"(the same model's weights need the other convention, or permuted q/k weights)")
    else:
        out.append("matches no preset")
    return out


def _axis_runs(axes: list[int]) -> str:
    """'0 x16, 1 x24, 2 x24' (runs of one axis), at most 8 runs then '...'."""
    runs: list[list[int]] = []
    for a in axes:
        if runs and runs[-1][0] == a:
            runs[-1][1] += 1
        else:
            runs.append([a, 1])
    return ", ".join(f"{a} x{n}" for a, n in runs[:8]) + (", ..." if len(runs) > 8 else "")


def json_compact(d) -> str:
    return json.dumps(d, separators=(",", ":")) if d else ""
