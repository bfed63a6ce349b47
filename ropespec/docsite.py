"""The documentation site's generated pages: what the code states, rendered at build time so that no page can drift
from it (``mkdocs build``: ``docs/hooks.py`` adds :func:`pages` to the site).

* ``index.md``: README.md, the site's home, its ``docs/`` links made the site's own;
* ``reference/cli.md``: every command and option, as ``--help`` prints it (argparse, :func:`ropespec.cli.parser`);
* ``reference/options.md`` and ``reference/python.md``: every command's options with their defaults, and the Python
  API's keywords with the pytest plugin's options, from the requests' fields (:mod:`ropespec.request`);
* ``reference/expectation.md``: every expectation key with its valid range (:data:`ropespec.spec.schema.RANGES`), the
  conventions, directions and dtypes, and every preset with its note;
* ``reference/words.md``: every fault word with its meaning (:data:`ropespec.spec.glossary.DIAGNOSES`) and the zoo
  members that fail with it;
* ``reference/invariants.md``: every invariant with its statement and source (:data:`ropespec.spec.invariants.REGISTRY`);
* ``reference/spec.md``: the executable spec (:func:`ropespec.specdoc.markdown`), its formulas as MathML;
* ``explanation/tolerance.md``: the error model every bound is derived from and the rules of every verdict, as the
  code that enforces them states them (:mod:`ropespec.spec.tolerance`, :func:`ropespec.specdoc.rules_blocks`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ropespec import cli, request, specdoc
from ropespec.implementations.zoo import members
from ropespec.spec import glossary, presets, schema, tolerance
from ropespec.spec.invariants import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def index() -> str:
    """README as the site's home: its links into ``docs/`` are the site's pages (docs/SPEC.md's is the spec page, which
    renders its formulas); other repository files are code."""
    text = (ROOT / "README.md").read_text().replace("](docs/SPEC.md)", "](reference/spec.md)")  # its site page
    return re.sub(r"\]\(docs/([^)]*)\)", r"](\1)", text)


def cli_page() -> str:
    ap = cli.parser()
    out = ["# Command line", "", "Every command and option, as `ropespec COMMAND --help` prints it (generated from the "
           "argument parser).", "", "```text", ap.format_help().rstrip(), "```", ""]
    for name, parser in ap.commands.items():
        out += [f"## ropespec {name}", "", "```text", parser.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def options_page() -> str:
    """Every option of every command, with its default and what it is, from the requests' fields (the one source of
    the parsers, the Python API's keywords and the pytest plugin's options)."""
    blocks = [("h", 1, "Options"),
              ("p", "Every command's options, each with its default and what it is, as the command's request states it "
                    "(`ropespec/request.py`: one typed request per command, its fields the options; `--help` says "
                    "the same, and [the Python API](python.md) takes `ropespec check`'s as keywords). Where the "
                    "default column is empty, what applies is in the option's own words.")]
    for name, cls in request.REQUESTS.items():
        rows = [[f"`{', '.join(flags)}`" + (f" `{meta}`" if meta else ""), f"`{field}`", default, said]
                for field, flags, meta, default, said in request.options_of(cls)]
        if rows:
            blocks += [("h", 2, f"ropespec {name}"), ("table", ["option", "field", "default", "what it is"], rows)]
    return specdoc.render_markdown(blocks)


def python_page() -> str:
    """The Python API's keywords, from the requests' fields, with the pytest plugin's options beside them."""
    blocks = [("h", 1, "The Python API"),
              ("p", "`ropespec.check(fn, expect=None, **keywords)` and `ropespec.fingerprint(fn, expect=None, "
                    "**keywords)` build the request `ropespec check` and `ropespec fingerprint` build "
                    "(`ropespec.request.CheckRequest`, `FingerprintRequest`) from their keywords: each keyword is a "
                    "field of it, with the default and meaning below; another keyword is a TypeError. The pytest "
                    "plugin's `--rope-*` options are fields of the same request.")]
    for title, cls in (("ropespec.check", request.CheckRequest), ("ropespec.fingerprint", request.FingerprintRequest)):
        plugin = {f: flag for f, flag in request.pytest_options(cls)}
        rows = [[f"`{name}`", f"`{default}`" if default else "", f"`{plugin[name]}`" if name in plugin else "", said]
                for name, default, said in request.api_options(cls)]
        blocks += [("h", 2, title), ("table", ["keyword", "default", "pytest plugin", "what it is"], rows)]
    return specdoc.render_markdown(blocks)


def expectation_page() -> str:
    return specdoc.render_markdown([
        ("h", 1, "The expectation"),
        ("p", "What the implementation is expected to compute: a preset, inline JSON, a JSON file or a Hugging Face "
              "config.json (`--expect`). Every key and its valid range (a value outside it is refused with one line "
              "naming the key and the range, exit 2):"),
        ("table", ["key", "valid values"], [[f"`{k}`", v] for k, v in schema.RANGES.items()]),
        ("p", f"Conventions: {', '.join(f'`{c}`' for c in schema.CONVENTIONS)}. Directions: "
              f"{', '.join(f'`{d}`' for d in schema.DIRECTIONS)}. Dtypes: {', '.join(f'`{d}`' for d in schema.DTYPES)};"
              f" angle and inverse-frequency dtypes also `exact` (the strict class)."),
        ("h", 2, "Presets"), ("p", "`ropespec presets` lists them; each is a model's published values."),
        ("table", ["preset", "note"], [[f"`{name}`", presets.NOTES.get(name, "")] for name in presets.names()]),
    ])


def words_page() -> str:
    by_word: dict[str, list[str]] = {}
    for m in members():
        by_word.setdefault(m.diagnosis, []).append(m.name)
    return specdoc.render_markdown([
        ("h", 1, "Fault words"),
        ("p", "The word a failure carries, from a fixed vocabulary, chosen by evidence measured on the implementation; "
              "beside each, the zoo members (buggy implementations in `implementations/zoo/`) that fail with it."),
        ("table", ["word", "meaning", "zoo members that fail with it"],
         [[f"`{word}`", meaning, ", ".join(f"`{n}`" for n in sorted(by_word.get(word, [])))]
          for word, meaning in glossary.DIAGNOSES.items()]),
    ])


def invariants_page() -> str:
    out = ["# Invariants", "", "Every invariant ropespec checks, as the registry states it (`ropespec invariants`); the "
           "[spec](spec.md) adds each one's formula, proof, properties and zoo.", ""]
    for inv in REGISTRY.values():
        out += [f"## {inv.id}", "", inv.statement, ""]
        if inv.expected_to_fail:
            out += [f"*A documented non-invariant*: {inv.expected_to_fail}", ""]
        if inv.source:
            out += [f"Source: {inv.source}", ""]
    return "\n".join(out)


def spec_page() -> str:
    return specdoc.markdown(seeds="../seeds", math="mathml")


def tolerance_page() -> str:
    intro = ("Every bound a check compares against is derived from the precision the expectation promises and this "
             "error model, never tuned to make a check pass; the [spec](../reference/spec.md) lists each invariant's "
             "rule with it. The model and the rules are read from the code that applies them.")
    blks = [("h", 1, "The tolerance model"), ("p", intro), *specdoc.tolerance_blocks(tolerance.__doc__),
            *specdoc.rules_blocks()]
    return specdoc.render_markdown(blks, math="mathml")


def pages() -> dict[str, str]:
    """Each generated page by its path under the site."""
    return {"index.md": index(), "reference/cli.md": cli_page(), "reference/options.md": options_page(),
            "reference/python.md": python_page(), "reference/expectation.md": expectation_page(),
            "reference/words.md": words_page(), "reference/invariants.md": invariants_page(),
            "reference/spec.md": spec_page(), "explanation/tolerance.md": tolerance_page()}
