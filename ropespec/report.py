"""Reports: a rich table on a terminal, plain text when piped (the --json and --junit documents are
:mod:`ropespec.formats`')."""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ropespec.implementations.contract import clean
from ropespec.implementations.families import form_of
from ropespec.properties.diagnose import STRUCTURAL
from ropespec.properties.precision import class_of, describe_position, holds
from ropespec.matrix import config_tag
from ropespec.replay import replay_text
from ropespec.spec import tolerance

_STYLE = {"pass": "green", "fail": "bold red", "skip": "yellow", "error": "bold magenta", "xfail": "cyan"}


def _worst(r) -> str:
    return f"{_ratio(r)} of bound" if r.worst is not None and r.worst != float("inf") else _ratio(r)


def shown_results(rep):
    """The results worth a row: not those of properties made for the other mode (rope vs decode)."""
    return [r for r in rep.results if r.applicable]


@dataclass(frozen=True)
class SkipGroup:
    """Skips of several properties of one implementation for one and the same reason: one row of the text report (the
    JSON and JUnit reports keep a result each)."""

    results: tuple

    status = "skip"
    diagnosis = None
    worst = None

    @property
    def message(self) -> str:
        return self.results[0].message

    @property
    def label(self) -> str:
        sections = {r.invariant.split(".", 1)[0] for r in self.results}
        return f"{len(self.results)} {next(iter(sections)) + ' ' if len(sections) == 1 else ''}properties"


def display_rows(rep) -> list:
    """The rows of an implementation in the text report: its shown results, with the skips that share a reason said
    once, as a :class:`SkipGroup` where the first of them stands."""
    shown = shown_results(rep)
    by_reason: dict[str, list] = {}
    for r in shown:
        if r.status == "skip" and r.message:
            by_reason.setdefault(r.message, []).append(r)
    rows, said = [], set()
    for r in shown:
        group = by_reason.get(r.message) if r.status == "skip" and r.message else None
        if group is None or len(group) < 2:
            rows.append(r)
        elif r.message not in said:
            said.add(r.message)
            rows.append(SkipGroup(tuple(group)))
    return rows


def result_label(r) -> str:
    if isinstance(r, SkipGroup):
        return r.label
    """The invariant id, with the property's name when it is not the invariant's own."""
    own = r.invariant.split(".", 1)[1].replace("-", "_")
    full = r.invariant.replace(".", "_").replace("-", "_")
    return r.invariant if r.property in (own, full) else f"{r.invariant} ({r.property})"


def _detail(r) -> str:
    if r.status == "fail":
        return (f"[{r.diagnosis}] " if r.diagnosis else "") + r.message
    return r.message


_PIPED_DETAIL = 160


def table_mode(console: Console) -> bool:
    """The table on a terminal; plain lines when piped or on a dumb terminal. NO_COLOR removes colour (rich reads
    it), nothing else."""
    return console.is_terminal and os.environ.get("TERM") != "dumb"


def _alias(n: int) -> str:
    letters = ""
    n += 1
    while n:
        n, rem = divmod(n - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


#: the room a note column needs beside the table's own columns before notes go into the table
_NOTE_MIN = 50


def _table(reports, console: Console) -> None:
    """Implementation (or its alias), invariant, status, diagnosis word and worst ratio: columns that
    fold rather than vanish, so every row stays readable at 80 columns. Failures are explained under 'N failing';
    other notes (skips, expected failures) go in a note column where the terminal has room for one beside full
    names, else in a list below the table."""
    long = not _fits(reports, console.width)
    names = {id(rep): (_alias(i) if long else rep.impl.name) for i, rep in enumerate(reports)}
    if long:  # one step from the letter to what it stands for: the name, and the TARGET where it is another
        for rep in reports:
            target = getattr(rep.impl, "target", None)
            also = f" ({target})" if target and target != rep.impl.name else ""
            console.print(Text(f"{names[id(rep)]} = {rep.impl.name}{also}"), soft_wrap=True)
    inline = not long and _fits(reports, console.width - _NOTE_MIN)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("impl" if long else "implementation", overflow="fold")
    table.add_column("invariant", overflow="fold", min_width=16, ratio=None if inline else 3)
    table.add_column("status", no_wrap=True, min_width=5)
    table.add_column("word", overflow="fold", min_width=6, ratio=None if inline else 1)
    table.add_column("worst/bound", overflow="fold", min_width=7)
    if inline:
        table.add_column("note", overflow="fold", ratio=1)
    notes = []
    for rep in reports:
        for r in display_rows(rep):
            note = r.message if r.status not in ("fail", "error") and r.message else ""  # failures: under 'N failing'
            # Text, not markup: '[scaling]' and '[row 1, dim 5]' in a message are text, not styles
            cells = [Text(names[id(rep)]), Text(result_label(r)), Text(r.status, style=_STYLE[r.status]),
                     Text(r.diagnosis or ""), Text(_ratio(r))]
            table.add_row(*cells, *([Text(note)] if inline else []))
            if note and not inline:
                notes.append(Text(f"{names[id(rep)]} {result_label(r)}: {r.status}: {note}"))
    console.print(table)
    if notes:
        console.print(Text("notes:"))
        for n in notes:
            console.print(Text("  ") + n, soft_wrap=False)


def _fits(reports, width: int) -> bool:
    """The table with every implementation's full name fits ``width`` columns, no column folded."""
    rows = [r for rep in reports for r in display_rows(rep)] or [None]
    name = max(len(rep.impl.name) for rep in reports) if reports else 0
    invariant = max([len(result_label(r)) for r in rows if r is not None] + [9])
    word = max([len(r.diagnosis or "") for r in rows if r is not None] + [4])
    return name + invariant + 6 + word + 11 + 8 <= width  # status 6, worst/bound 11, the gaps between columns 8


def _ratio(r) -> str:
    if r.worst is None:
        return ""
    return "inf" if r.worst == float("inf") else f"{r.worst:.2g}"


def render(reports: list, console: Console, *, seed: int, profile: str,
           values: str = "the replay command with --json PATH", ended: str | None = None) -> None:
    """Print the implementation x invariant table, then every failure with its replay command. ``ended``: how a run
    that did not finish ended (interrupted, stopped by --maxfail), said in the report's last line, so that a report
    saved to a file says it is not the whole run."""
    wrap = not table_mode(console)  # on a terminal rich wraps at words; piped lines stay whole
    console.print(f"ropespec check: profile {profile}, seed {seed} (rerun the same run with --seed {seed})",
                  highlight=False, soft_wrap=wrap)
    for rep in reports:
        s = rep.impl
        line = s.describe()
        family = form_of(s.shape).of
        if s.expect is not None and family.rules(s.expect) is None:
            line += f"; tolerance: {family.class_name(s.expect)}"
        line += f"; runs {s.isolation}" if s.isolation.startswith("in-process") else f"; runs in a {s.isolation}"
        if s.warmup_seconds is not None:
            line += f", warm-up {s.warmup_seconds:.2g} s"
        for note in s.notes:
            line += f"; {note}"
        console.print(line, highlight=False, markup=False, soft_wrap=wrap)
    failing = sum(r.status in ("fail", "error") for rep in reports for r in rep.results)
    if table_mode(console):
        _table(reports, console)
    else:
        w_name = max([len(rep.impl.name) for rep in reports] + [14])
        w_inv = max([len(result_label(r)) for rep in reports for r in display_rows(rep)] + [9])
        for rep in reports:
            for r in display_rows(rep):
                detail = _detail(r)
                if r.status in ("fail", "error") and len(detail) > _PIPED_DETAIL:  # said in full below
                    detail = detail[:_PIPED_DETAIL] + f" [... cut: in full under '{failing} failing' below]"
                console.print(
                    f"{rep.impl.name:<{w_name}}  {result_label(r):<{w_inv}}  {r.status:<5}  {_worst(r):<14}  {detail}".rstrip(),
                    highlight=False, markup=False, soft_wrap=True,
                )
    for rep in reports:
        out = rep.impl.output()
        if out is not None and out.total:
            cut = f", {out.cut} bytes cut from the middle" if out.cut else ""
            console.print(f"\n{rep.impl.name} printed {out.total} bytes{cut}:", highlight=False, markup=False)
            console.print(_indent(clean(out.text()), 10), highlight=False, markup=False)
        if rep.impl.left_behind:
            n = len(rep.impl.left_behind)
            console.print(f"\n{rep.impl.name} left {_count(n, 'process')} running after its last call, stopped with "
                          f"its worker: {'; '.join(clean(p) for p in rep.impl.left_behind[:4])}"
                          + (f"; and {n - 4} more" if n > 4 else ""), highlight=False, markup=False, soft_wrap=True)
    failures = [(rep, r) for rep in reports for r in rep.results if r.status in ("fail", "error")]
    if failures:
        console.print()
        console.print(f"{len(failures)} failing:", highlight=False)
        for rep in reports:
            root = root_cause(rep)
            if root:
                word, n, total = root
                rest = f"; the other {total - n} are listed after them" if n < total else ""
                console.print(f"{rep.impl.name}: root cause {word} ({n} of {total} failures, listed first{rest})",
                              highlight=False, markup=False, soft_wrap=True)
        failures.sort(key=lambda item: failure_order(*item))
        for rep, r in failures:
            _explained(console, r.explain(replay_text(rep.impl, r), values, rep.impl.expect_words))
    for line in matrix_summary(reports):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    n = sum(len(shown_results(rep)) for rep in reports)
    console.print(f"{counts_text([r for rep in reports for r in rep.results], errors=True)} "
                  f"({_count(n, 'check')} on {_count(len(reports), 'implementation')})"
                  + (f"; {ended}" if ended else ""), highlight=False, soft_wrap=True)


def matrix_summary(reports: list) -> list[str]:
    """A configuration matrix in a few lines, per TARGET: in how many configurations everything held, and each
    failure's word and invariant once, with the configurations it appears in ("[scaling] rope.conformance in 12 of
    40 configurations: ..."); the combinations it declines are counted apart. Nothing outside a matrix."""
    in_matrix = [rep for rep in reports if rep.impl.configuration is not None]
    if not in_matrix:
        return []
    lines = ["", "matrix:"]
    for target in dict.fromkeys(rep.impl.target for rep in in_matrix):
        mine = [rep for rep in in_matrix if rep.impl.target == target]
        checked = [rep for rep in mine if rep.checked]
        held = [rep for rep in checked if rep.passed]
        causes: dict[tuple[str, str], list[str]] = {}
        for rep in checked:
            for r in rep.results:
                if r.status in ("fail", "error"):
                    word = f"[{r.diagnosis}]" if r.status == "fail" and r.diagnosis else r.status
                    tags = causes.setdefault((word, r.invariant), [])
                    if config_tag(rep.impl.configuration) not in tags:
                        tags.append(config_tag(rep.impl.configuration))
        declined = len(mine) - len(checked)
        lines.append(f"  {target}: held in {len(held)} of {_count(len(checked), 'configuration')} checked"
                     + (f" ({declined} declined: skipped with the reason)" if declined else ""))
        for (word, invariant), tags in sorted(causes.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"    {word} {invariant} in {len(tags)} of {len(checked)}: {', '.join(tags)}")
    return lines


def counts_text(results, errors: bool = False) -> str:
    """"P passed, F failed, S skipped" of the checks that ran, with errors (always when ``errors``) and expected
    failures where there are any: the summary line and the line per implementation on stderr say the same."""
    counts = {k: sum(r.status == k for r in results if r.applicable) for k in ("pass", "fail", "skip", "error", "xfail")}
    text = f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    if errors or counts["error"]:
        text += f", {counts['error']} error{'s' * (counts['error'] != 1)}"
    if counts["xfail"]:
        text += f", {counts['xfail']} expected failure{'s' * (counts['xfail'] != 1)}"
    return text


def _explained(console: Console, text: str) -> None:
    """A failure's explanation. On a terminal each line of prose wraps at words, its continuation lines hanging two
    columns in; a counterexample's values and the replay command stay one line each (the terminal folds them, so
    that they copy whole). Piped, every line whole."""
    if not table_mode(console):
        console.print(text, highlight=False, markup=False, soft_wrap=True)
        return
    for line in text.splitlines():
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body))
        if body.startswith("replay:") or len(indent) >= 4:  # a command, a counterexample's values: data, whole
            console.print(Text(line), soft_wrap=True)
            continue
        for part in textwrap.wrap(body, max(20, console.width - len(indent)), subsequent_indent="  ",
                                  break_on_hyphens=False) or [""]:
            console.print(Text(indent + part), soft_wrap=True)


def count(n: int, noun: str) -> str:
    """'1 check', '2 checks'."""
    return _count(n, noun)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def root_cause(rep) -> tuple[str, int, int] | None:
    """(word, failures carrying it, failures) when an implementation's failures have a structural root
    cause (ropespec.properties.diagnose.STRUCTURAL), else None."""
    words = [r.diagnosis for r in rep.results if r.status == "fail"]
    roots = [w for w in dict.fromkeys(words) if w in STRUCTURAL]
    return (roots[0], words.count(roots[0]), len(words)) if roots else None


def failure_order(rep, r) -> int:
    """Order of a failure in the list: the root cause's own failures first, then what follows from it."""
    root = root_cause(rep)
    if root is None or r.diagnosis != root[0]:
        return 2
    return 1 if r.failure is not None and r.failure.follows else 0


def _indent(text: str, max_lines: int) -> str:
    lines = text.splitlines()
    if len(lines) > max_lines:
        half = max_lines // 2
        lines = lines[:half] + [f"[... {len(lines) - 2 * half} lines not shown; all of it in the --json report ...]"] + lines[-half:]
    return "\n".join("  | " + ln for ln in lines)


def render_precision(sw, console: Console, target: str) -> None:
    """The precision sweep as a table of positions, then the safe position of every class."""
    e = sw.expect
    declared = class_of(e)
    console.print(f"ropespec precision: {target}: {e.describe()}; declared class: {tolerance.class_name(e)}",
                  highlight=False, markup=False)
    cols = ["exact", declared] if declared != "exact" else ["exact"]
    header = f"{'position':>12}  {'max error':>10}  {'median':>10}  " + "  ".join(
        f"{('strict' if c == 'exact' else c) + ' bound':>15}" for c in cols)
    console.print(header, highlight=False, markup=False)
    inside = sw.in_domain()
    for i, p in enumerate(sw.positions):
        if i and inside[i - 1] and not inside[i]:  # the verdict is about the rows above; the rest is information
            console.print(f"{'':>12}  beyond max_position {sw.domain}: measured for information, not the verdict",
                          highlight=False, markup=False)
        row = f"{int(p):>12}  {sw.max_error[i]:>10.3g}  {sw.median_error[i]:>10.3g}  " + "  ".join(
            f"{sw.bounds[c][i]:>13.3g}{'  ' if sw.ratio[c][i] <= 1 else ' x'}" for c in cols)
        console.print(row, highlight=False, markup=False)
    console.print("errors and bounds are relative to the norm of the pair; x marks a violated bound", highlight=False)
    g = sw.growth()
    if g is not None:
        console.print(f"error growth: max error ~ p^{g:.2f} over the upper half of the sweep "
                      f"({'flat' if g < 0.25 else 'proportional to p' if g > 0.75 else 'in between'})", highlight=False)
    for c in sw.ratio:
        console.print(class_sentence(sw, c), highlight=False)


def class_sentence(sw, c: str, short: bool = False) -> str:
    """Up to where class ``c`` holds in the sweep ``sw``, where it stops holding and where it stops promising
    anything: the one sentence the text report and the plot's legend both say ("holds to the end of the sweep" is
    not a limit; "holds up to p = 9 and fails from p = 11" is). ``short`` leaves out why it promises nothing."""
    e = sw.expect
    name = f"strict {e.dtype}" if c == "exact" else f"{c} angles"
    mark = " (declared)" if c == class_of(e) else ""
    safe, until, fails = sw.safe_position(c), sw.promises_until(c), failure_words(sw, c)
    why = "" if short else " (its bound reaches twice the pair norm)"
    if fails is None and until is None:
        return f"{name}{mark} holds at every swept position, to the end of the sweep (p = {int(sw.positions[-1])})"
    text = f"{name}{mark} {holds(safe)}"
    if until is not None and until == safe:
        text += f", beyond which it promises nothing{why}"
        return text + (f"; the output is {fails}" if fails else "")
    text += f" and {fails}" if fails else ""
    return text + (f"; it promises nothing beyond {describe_position(until)}{why}" if until is not None else "")


def failure_words(sw, c: str) -> str | None:
    """Where class ``c`` stops holding in the sweep, in the words the text and the plot both say: "fails from p = F"
    (its error past its bound) or "noise from p = F" (an error of the pair norm where it promises nothing); None
    where it never fails."""
    first = sw.first_failure(c)
    if first is None:
        return None
    return f"{'noise' if sw.is_noise(c, first) else 'fails'} from p = {first}"


def render_exhaustive(ex, console: Console, target: str) -> None:
    """Every class: holds at every position, or the first position where it fails; the worst ratio."""
    e = ex.expect
    declared = class_of(e)
    say = lambda text: console.print(text, highlight=False, markup=False, soft_wrap=True)
    say(f"ropespec precision --exhaustive: {target}: {e.describe()}; declared class: {tolerance.class_name(e)}")
    say(f"every position 0 .. {ex.n - 1}, one random vector each, against ropespec.reference.fast (its own error, "
        f"{ex.reference_error:.1e} of the pair norm, is added to every bound)")
    if ex.nonfinite_at is not None:
        say(f"non-finite output first at p = {ex.nonfinite_at}")
    say(f"largest error: {ex.max_error[0]:.3g} x ||x_pair|| at p = {ex.max_error[1]}")
    for c, first in ex.first_failure.items():
        name = f"strict {e.dtype}" if c == "exact" else f"{c} angles"
        mark = " (declared)" if c == declared else ""
        ratio, at = ex.worst[c]
        until = ex.promises_until(c)
        nothing = f", beyond which it promises nothing (its bound reaches twice the pair norm)"
        if first is None and until is None:
            say(f"{name}{mark}: holds at every position below {ex.n} (worst {ratio:.3g} of the bound, at p = {at})")
        elif first is None:
            say(f"{name}{mark}: {holds(until)}{nothing}")
        elif until is not None and first > until:
            say(f"{name}{mark}: {holds(until)}{nothing}, and nowhere past it: the output is noise from p = {first} "
                f"(an error of the pair norm or more)")
        else:
            say(f"{name}{mark}: first fails at p = {first}; worst {ratio:.3g} times the bound, at p = {at}")
