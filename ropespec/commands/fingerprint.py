"""``ropespec fingerprint``: what an implementation computes, inferred by probing it with basis vectors."""

from __future__ import annotations

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
from ropespec.request import FingerprintRequest
from ropespec.spec import DEFAULT

NAME = "fingerprint"


def add(sub) -> None:
    FingerprintRequest.add_arguments(sub.add_parser(
        NAME, help="infer what an implementation computes, by probing it",
        description="Probe TARGET with basis vectors and report its convention, rotary dim, frequencies, base, scaling "
                    "curve, direction, offset, attention factor, precision and preset; with --family alibi, t5-bias "
                    "or xpos, what the bias computes (ALiBi's slopes, their rule and the bias's form; T5's bucket "
                    "boundaries; xPos's scale base and centres)."))


def run(req: FingerprintRequest, console: Console) -> int:
    expect = parse_expect(req.expect) or DEFAULT
    with_rope(expect, "rope", "a fingerprint")
    outs = req.outputs(**{"--json": req.json})
    if outs.to_stdout:
        console = console_for(to_stderr=True)
    outs.clear()
    probe = handler(req.family)
    [impl] = load_implementations([req.target], expect=expect, **req.loading())
    try:
        return probe(req, console, impl, outs)
    except Failure as ex:
        return options.failed_to_run(console, req.target, ex)
    finally:
        impl.close()


def handler(family: str):
    """What fingerprints an implementation of the family: its class's ``fingerprint``, a function
    ``(request, console, impl, outs) -> exit code``; UsageError for a family that has none."""
    fam = families.get(family)
    if not fam.fingerprint:
        raise UsageError(f"--family: ropespec fingerprint probes {', '.join(f.name for f in families.fingerprinted())}; "
                         f"got {fam.name!r}")
    return resolve({"target": fam.fingerprint})


def rope(req, console, impl, outs) -> int:
    """RoPE's fingerprint (ropespec.properties.fingerprint), from the implementation as f(x, positions)."""
    fp = fingerprint(options.function_of(impl, req.target), impl.expect)
    say(console, f"ropespec fingerprint: {req.target} (head_dim {fp.head_dim}, {impl.dtype}, probed to "
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

    def handler(req, console, impl, outs) -> int:
        fp = probe(options.function_of(impl, req.target, bound=True), impl.expect)
        family = impl.shape.family
        head = (f"ropespec fingerprint: {req.target} ({family}, {impl.dtype}, probed to "
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
