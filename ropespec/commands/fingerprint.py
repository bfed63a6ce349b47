"""``ropespec fingerprint``: what an implementation computes, inferred by probing it with basis vectors."""

from __future__ import annotations

import argparse

from rich.console import Console

from ropespec.implementations.contract import Failure
from ropespec.commands import options
from ropespec.console import console as console_for, say
from ropespec.bias_fingerprints import fingerprint_alibi, fingerprint_t5, fingerprint_xpos
from ropespec.implementations.boundary.targets import resolve
from ropespec.spec import families
from ropespec.properties.fingerprint import fingerprint
from ropespec.properties.fingerprint_text import describe, json_compact, reproduction
from ropespec.inputs import UsageError, load_implementations, parse_expect, with_rope
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
    with_rope(expect, "rope", "a fingerprint")
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
    say(console, f"  {reproduction(fp)}")
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
