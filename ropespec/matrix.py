"""The configuration matrix of ``ropespec check``: every expectation (``--expect`` repeated, or a glob of config.json
files), dtype and layout (comma-separated lists) that makes sense, each combination one implementation of every
TARGET. Everything is read and validated before any check runs: a glob that matches nothing, a file that does not
parse, an unknown dtype or layout is one line naming it."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, replace
from typing import Callable

from ropespec.implementations import LoadRequest
from ropespec.inputs import UsageError, load_requests, parse_expect
from ropespec.spec import presets
from ropespec.spec.expectation import DTYPES, Expect, ExpectationError
from ropespec.spec.glossary import LAYOUTS


@dataclass(frozen=True)
class Configuration:
    """One combination: the expectation (None: drawn for factories) and its label, a dtype (None: the expectation's),
    a layout."""

    label: str | None
    expect: Expect | None
    dtype: str | None
    layout: str

    def says(self) -> dict:
        return {"expect": self.label, "dtype": self.dtype or (self.expect.dtype if self.expect else None),
                "layout": self.layout}


def config_tag(configuration: dict) -> str:
    """How a configuration of the matrix reads in a check's name and in the summary: expectation-dtype-layout."""
    return "-".join(str(configuration[k] or "drawn") for k in ("expect", "dtype", "layout"))


def _label(value: str, index: int) -> str:
    """How an expectation reads in a check's name: its preset, its model folder (…/llama3.1-8b/config.json), its file
    name, or its place on the command line (inline JSON)."""
    if value in presets.names():
        return value
    if os.path.isfile(value):
        path = os.path.abspath(value)
        stem = os.path.splitext(os.path.basename(path))[0]
        return os.path.basename(os.path.dirname(path)) if stem == "config" else stem
    return f"expect{index + 1}"


def _expects(values: list | None) -> list[tuple[str | None, Expect | None]]:
    if not values:
        return [(None, None)]
    out: list[tuple[str | None, Expect | None]] = []
    for value in values:
        if not isinstance(value, str):  # an Expect or a dict (the Python API's)
            out.append((f"expect{len(out) + 1}", parse_expect(value)))
            continue
        if any(c in value for c in "*?[") and not value.lstrip().startswith(("{", "[")):
            files = sorted(f for f in glob.glob(value, recursive=True) if os.path.isfile(f))
            if not files:
                raise UsageError(f"--expect: {value!r} matches no file")
        else:  # one expectation: its errors read as they always have
            out.append((_label(value, len(out)), parse_expect(value)))
            continue
        for f in files:
            try:
                out.append((_label(f, len(out)), parse_expect(f)))
            except ExpectationError as e:
                raise UsageError(f"--expect: {f}: {e}") from None
    labels = [label for label, _ in out]
    for i, (label, e) in enumerate(out):  # two files of one name (…/a/config.json, …/b/config.json) stay apart
        if labels.count(label) > 1:
            out[i] = (f"{label}-{labels[:i + 1].count(label)}", e)
    return out


def _listed(option: str, value: str | None, known, default) -> list:
    if value is None:
        return [default]
    items = [v.strip() for v in value.split(",")]
    for v in items:
        if v not in known:
            raise UsageError(f"{option}: unknown {v!r} (known: {', '.join(known)})")
    return list(dict.fromkeys(items))


def configurations(expects: list[str] | None, dtypes: str | None, layouts: str | None) -> list[Configuration]:
    """Every combination, validated; UsageError (one line) on bad input."""
    exp = _expects(expects)
    ds = _listed("--dtype", dtypes, DTYPES, None)
    ls = _listed("--layout", layouts, list(LAYOUTS), "nd")
    return [Configuration(label, e, d, layout) for label, e in exp for d in ds for layout in ls]


def requests_for(targets: list | None, configs: list[Configuration], loading: Callable[[Configuration], dict],
                 notes: list[str] | None = None) -> list[LoadRequest]:
    """One implementation per TARGET (or shipped implementation) and combination, each named by its combination when
    there is more than one (``TARGET[llama3.1-8b-bfloat16-bshd]``); ``loading(configuration)`` gives the other
    :func:`ropespec.inputs.load_requests` arguments."""
    out = []
    many = len(configs) > 1
    for c in configs:
        for request in load_requests(targets, expect=c.expect, notes=notes if not out else [], **loading(c)):
            if many:
                configuration = {**c.says(), "dtype": request.dtype or c.says()["dtype"] or "float32"}
                base = request.name or (request.target if isinstance(request.target, str) else None)
                request = replace(request, name=f"{base}[{config_tag(configuration)}]" if base else None,
                                  configuration=configuration)
            out.append(request)
    return out


__all__ = ["Configuration", "config_tag", "configurations", "requests_for"]
