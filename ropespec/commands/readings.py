"""``ropespec readings``: how each library reads the same config.json into its RoPE, measured against the reference
reading (transformers', :mod:`ropespec.spec.hfconfig`), as one table of libraries x configs.

Each library builds its RoPE from the file through its own code (:mod:`ropespec.implementations.libraries`); where it
computes something else than the reference reading, the word names the field it reads otherwise, given only where its
RoPE holds under that reading of the file and no other word's (:mod:`ropespec.properties.readings`). Exit 0: every
library checked at least one config, and every config it read agrees; 1: a library reads a config otherwise; 2: bad
input, a library named with --library that is not installed here, or nothing checked.
"""

from __future__ import annotations

import json
import multiprocessing
import tempfile
from concurrent.futures import ProcessPoolExecutor, TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from datetime import date
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ropespec.commands import options
from ropespec.implementations import libraries
from ropespec.implementations.libraries import Unreadable, _carrier
from ropespec.inputs import UsageError
from ropespec.outputs import config_files
from ropespec.properties import readings as measured
from ropespec.request import ReadingsRequest
from ropespec.spec import hfconfig
from ropespec.spec.expectation import ExpectationError
from ropespec.spec.readings import WORDS

NAME = "readings"


def add(sub) -> None:
    ReadingsRequest.add_arguments(sub.add_parser(
        NAME, help="measure how each installed library reads config.json files into its RoPE",
        description="Run config.json files through every installed library's own code (transformers, the reference "
                    f"reading; {', '.join(n for n in libraries.names() if n != 'transformers')}) and measure the RoPE "
                    "each builds against the reference reading. A disagreement names the field read otherwise: "
                    + "; ".join(f"{w}: {m}" for w, m in WORDS.items()) + "."))


def configs(given) -> list[tuple[str, Path, dict]]:
    """(label, file, parsed JSON) of every config named, globs expanded, folders read as their config.json; one line,
    exit 2, for a glob matching nothing, a missing file or one that is no JSON object."""
    out = []
    for value in given:
        files = config_files(value)
        if not files:
            raise UsageError(f"CONFIG: {value!r} matches no file")
        for f in files:
            path = Path(f)
            if not path.is_file():
                raise UsageError(f"CONFIG: {f}: no such file")
            try:
                d = json.loads(hfconfig.read_text(path, "CONFIG"))
            except json.JSONDecodeError as e:
                raise UsageError(f"CONFIG: {f}: not JSON ({e.msg} at line {e.lineno})") from None
            if not isinstance(d, dict):
                raise UsageError(f"CONFIG: {f}: must be a JSON object, got {type(d).__name__}")
            stem = path.stem
            out.append((path.parent.name if stem == "config" else stem, path, d))
    return out


def chosen(value: str | None) -> tuple[list, list[str]]:
    """The libraries to run and the lines saying which cannot run here: a library named that is not installed is
    UsageError (one line); by default the missing ones are said and left out."""
    names = [n.strip() for n in value.split(",") if n.strip()] if value else list(libraries.names())
    found = []
    for n in names:
        lib = libraries.find(n)
        if lib is None:
            raise UsageError(f"--library: unknown {n!r} (known: {libraries.listed()})")
        if lib not in found:
            found.append(lib)
    run, said = [], []
    for lib in found:
        why = lib.missing()
        if why is None:
            run.append(lib)
        elif value:
            raise UsageError(f"--library: {why}")
        else:
            said.append(why)
    return run, said


def _guarded(lib, call):
    """``call`` with what the library's own code raises said as Unreadable (one line in the table, never a verdict
    and never a traceback)."""
    def guarded(*args):
        try:
            return call(*args)
        except Unreadable:
            raise
        except Exception as e:  # noqa: BLE001  (the library's code under this config: said)
            first = (str(e).splitlines() or [""])[0][:200]
            raise Unreadable(f"{lib.name} raised {type(e).__name__}: {first}") from None

    return guarded


def measure_one(lib, d: dict, work: str, seed: int) -> dict:
    """One cell of the table: the library's reading of one config, measured in ``work`` (a fresh folder), or why it
    could not be. Runs in the library's own process (:class:`_Isolated`)."""
    work = Path(work)
    e = hfconfig.from_hf_config(d)
    try:
        if lib.door == "rope":
            folder = work / "config"
            folder.mkdir(exist_ok=True)
            (folder / "config.json").write_text(json.dumps(d))
            m = measured.measure(_guarded(lib, _guarded(lib, lib.rope)(folder)), e, seed)
        else:
            model = _guarded(lib, _carrier.save_carrier)(d, work / "carrier")
            logits = _guarded(lib, lambda t, p: lib.logits(work / "carrier", t, p))
            m = measured.measure_model(logits, model, e, seed, lib.from_zero)
    except Unreadable as why:
        return {"status": "unread", "why": str(why)}
    said = {"carrier": _carrier.carrier(d)["architectures"][0]} if lib.door == "model" else {}
    return {"status": "agrees" if m.agrees else "differs", **said, **m.to_dict()}


#: seconds one library may take over one config (a model door's conversion and calls take seconds)
CELL_TIMEOUT = 900


class _Isolated:
    """A library's code in a process of its own (spawned: nothing of ropespec's state is shared), one config at a time:
    a library that crashes, exits or hangs on a config is said in its cell ("not read") and gets a fresh process for
    the next one; it never takes ropespec down with it."""

    def __init__(self, lib):
        self.lib, self.name, self.pool = lib, lib.name, None

    def cell(self, d: dict, work: Path, seed: int) -> dict:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        future = self.pool.submit(measure_one, self.lib, d, str(work), seed)
        try:
            return future.result(timeout=CELL_TIMEOUT)
        except FuturesTimeout:
            self.close()
            return {"status": "unread", "why": f"{self.name} gave no answer within {CELL_TIMEOUT} s (its process "
                                               "was stopped)"}
        except BrokenProcessPool:
            self.close()
            return {"status": "unread", "why": f"{self.name}'s process ended while reading this config (a crash, "
                                               "an exit or running out of memory)"}

    def close(self) -> None:
        if self.pool is not None:
            for process in list(getattr(self.pool, "_processes", {}).values()):
                process.kill()
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def run(req: ReadingsRequest, console: Console) -> int:
    outs = req.outputs(**{"--out": req.out, "--json": req.json})
    read = configs(req.configs)
    for label, path, d in read:  # every config is the reference reader's before any library runs
        try:
            hfconfig.from_hf_config(d)
        except ExpectationError as e:
            raise UsageError(f"CONFIG: {path}: {e}") from None
    libs, said = chosen(req.library)
    if not libs:
        raise UsageError("no library can run here: " + "; ".join(said))
    rows = []
    workers = {lib.name: _Isolated(lib) for lib in libs}
    try:
        for label, path, d in read:
            with tempfile.TemporaryDirectory(prefix="ropespec-readings-") as tmp:
                for lib in libs:
                    work = Path(tmp) / lib.name
                    work.mkdir()
                    cell = workers[lib.name].cell(d, work, req.seed)
                    rows.append({"config": label, "file": str(path), "library": lib.name, "version": lib.version(),
                                 "door": lib.door, **cell})
                    console.print(_line(rows[-1]), highlight=False, markup=False, soft_wrap=True)
    finally:  # Ctrl-C included: no library's process is left running
        for worker in workers.values():
            worker.close()
    versions = {lib.name: lib.version() for lib in libs}
    report = {"date": date.today().isoformat(), "command": req.command_line(), "libraries": versions,
              "missing": said, "rows": rows}
    for line in said:
        console.print(f"not run: {line}", highlight=False, markup=False, soft_wrap=True)
    code = 0
    if req.out:
        code |= options.written(outs, "--out", markdown(report))
    if req.json:
        code |= options.written(outs, "--json", json.dumps(report, indent=1) + "\n")
    if code:
        return 2
    checked = {r["library"] for r in rows if r["status"] in ("agrees", "differs")}
    if not checked:
        console.print("nothing checked: no library could read any of these configs", highlight=False)
        return 2
    return 1 if any(r["status"] == "differs" for r in rows) else 0


def _figures(r: dict) -> str:
    bound = r.get("output_bound")
    against = f" (bound {bound:.2g})" if isinstance(bound, float) and bound == bound else ""
    if r["door"] == "model":
        return (f"a tiny {r['carrier'].removesuffix('ForCausalLM')} carrying the config's RoPE: logits off by "
                f"{r['output_error']:.2g}{against} at positions {r['probes'][-1]} … {r['largest']}")
    return (f"{r['pairs_off']} of {r['n_pairs']} pairs off, inv_freq up to {100 * r['freq_error']:.3g}% off, "
            f"magnitude {r['magnitude']:.4g} (reference {r['expected_magnitude']:.4g}), output off by "
            f"{r['output_error']:.2g}{against} at p = {r['largest']}")


def _line(r: dict) -> str:
    head = f"{r['config']} · {r['library']} {r['version']}: "
    if r["status"] == "unread":
        return head + f"not read: {r['why']}"
    if r["status"] == "agrees":
        return head + "agrees with the reference reading" + (f" ({_figures(r)})" if r["door"] == "model" else "")
    word = f"[{r['word']}] " if r["word"] else ("[" + " or ".join(r["words"]) + "?] " if r["words"] else "")
    reads = ("reads " + "; or ".join(r["holds_under"])) if r["holds_under"] else "no reading of the config fits"
    return head + f"differs {word}{reads} — {_figures(r)}"


def markdown(report: dict) -> str:
    """The table as a Markdown page: one row per config and library."""
    lines = ["# How each library reads the same config.json", "",
             f"`{report['command']}`, {report['date']}; "
             + ", ".join(f"{n} {v}" for n, v in report["libraries"].items())
             + ". Each library's RoPE is measured against the reference reading (transformers'); a field read "
               "otherwise is named where the library holds under that reading of the config and under no other word's "
               "([how](howto/readings.md)). A library of door \"model\" reads a tiny model carrying the config's RoPE "
               "fields through its own converter (its converter reads the config through the installed transformers).",
             "",
             "| config | library | verdict | field read otherwise | what it reads | measured |",
             "|---|---|---|---|---|---|"]
    for r in report["rows"]:
        lib = f"{r['library']} {r['version']}"
        if r["status"] == "unread":
            lines.append(f"| {r['config']} | {lib} | not read | | {r['why']} | |")
        elif r["status"] == "agrees":
            lines.append(f"| {r['config']} | {lib} | agrees | | | {_figures(r)} |")
        else:
            word = r["word"] or (" or ".join(r["words"]) + " (not told apart)" if r["words"] else "—")
            reads = "; or ".join(r["holds_under"]) or "no reading of the config fits"
            lines.append(f"| {r['config']} | {lib} | **differs** | {word} | {reads} | {_figures(r)} |")
    for line in report["missing"]:
        lines.append(f"\nNot run: {line}")
    return "\n".join(lines) + "\n"
