"""Where a command's reports go: every output path checked before anything runs, and every report written so that
the file on disk is this run's, whole, or absent.

* A report never overwrites an input: the TARGET's source file (and the modules it imports from its own folder), a
  ``--table`` TARGET's, the ``--expect`` file, a lab ``--module``, or another report of the same run.
* ``-`` and ``/dev/stdout`` mean standard output (the text report then goes to standard error); any other path must
  be creatable: its folder exists and takes a new file (``/sys``, ``/proc`` and read-only folders do not).
* A regular file is written to a temporary file beside it and renamed into place; an existing report is removed
  when the run starts, so an interrupted or failed run leaves no previous run's report behind. A device
  (``/dev/null``, ``/dev/full``) is written in place, and a write that fails there is one line, exit 2.
"""

from __future__ import annotations

import ast
import glob
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ropespec.implementations.boundary.targets import is_config_target
from ropespec.inputs import UsageError

#: the names that mean standard output
STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


@dataclass
class Output:
    option: str  # the option that names it ("--json")
    given: str  # as the user wrote it
    path: str | None  # absolute; None: standard output
    direct: bool = False  # an existing device or other special file: written in place


@dataclass
class Outputs:
    """The reports one command writes, checked (:func:`plan`)."""

    items: list[Output] = field(default_factory=list)

    @property
    def to_stdout(self) -> bool:
        return any(o.path is None for o in self.items)

    def get(self, option: str) -> Output | None:
        return next((o for o in self.items if o.option == option), None)

    def clear(self) -> None:
        """Remove the reports an earlier run left at these paths: from now on each holds this run's or nothing."""
        for o in self.items:
            if o.path and not o.direct:
                try:
                    os.unlink(o.path)
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise UsageError(f"{o.option}: cannot remove the earlier report {o.given}: {e.strerror}") from None

    def write(self, option: str, text: str) -> str | None:
        """Write one report; None when it was written, else the one-line reason it was not."""
        o = self.get(option)
        if o is None:
            return None
        try:
            if o.path is None:
                sys.stdout.write(text)
                sys.stdout.flush()
            elif o.direct:
                with open(o.path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            else:
                _replace(o.path, text)
        except BrokenPipeError:
            return f"{option}: standard output was closed before the report was written"
        except OSError as e:
            return f"{option}: {o.given} could not be written: {e.strerror or e}"
        return None


def _replace(path: str, text: str) -> None:
    """Write ``text`` to a temporary file in ``path``'s folder and rename it into place (atomic on one file system)."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it (mkstemp makes it private)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def plan(options: dict[str, str | None], inputs: list[tuple[str, str]] = ()) -> Outputs:
    """The outputs named by ``options`` ({"--json": path or None, ...}), each checked against ``inputs`` ((what it
    is, path) of each file the command reads), against the others, and for writability. UsageError (one line) when
    one is bad."""
    out = Outputs()
    guarded = [(what, Path(path).resolve()) for what, path in inputs]
    for option, given in options.items():
        if given is None:
            continue
        if not str(given).strip():
            raise UsageError(f"{option}: an empty path; give a file, or - for standard output")
        if given in STDOUT_NAMES:
            if out.to_stdout:
                raise UsageError(f"{option}: {given} is standard output, which {_first_stdout(out)} already writes to")
            out.items.append(Output(option, given, None))
            continue
        p = Path(given).expanduser().absolute()
        for what, real in guarded:
            if real is not None and _same(p, real):
                raise UsageError(f"{option}: {given} is {what}: a report never overwrites an input")
        for other in out.items:
            if other.path is not None and _same(p, Path(other.path)):
                raise UsageError(f"{option}: {given} is also {other.option}'s path: each report needs its own file")
        out.items.append(_checked(option, given, p))
    return out


def _first_stdout(out: Outputs) -> str:
    return next(o.option for o in out.items if o.path is None)


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _checked(option: str, given: str, p: Path) -> Output:
    if p.is_dir():
        raise UsageError(f"{option}: {given} is a folder; give a file path")
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise UsageError(f"{option}: {given}: {e.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):  # a device such as /dev/null or /dev/full: written in place
        if not os.access(p, os.W_OK):
            raise UsageError(f"{option}: {given} is not writable")
        return Output(option, given, str(p), direct=True)
    folder = p.parent
    if not folder.is_dir():
        raise UsageError(f"{option}: the folder {folder} does not exist")
    if mode is not None and not os.access(p, os.W_OK):
        raise UsageError(f"{option}: {given} is not writable")
    try:  # the folder takes a new file (the report is written beside it and renamed into place)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UsageError(f"{option}: cannot write in {folder}: {e.strerror or e}") from None
    return Output(option, given, str(p))


# -- the files a command reads ---------------------------------------------------------------------------------
def config_files(value: str) -> list[str]:
    """The config.json files one CONFIG argument names: the file itself, a model folder's config.json, or a glob's
    files, in order (none for a glob that matches nothing)."""
    if any(c in value for c in "*?["):
        return sorted(f for f in glob.glob(value, recursive=True) if os.path.isfile(f))
    return [os.path.join(value, "config.json") if os.path.isdir(value) else value]


def input_files(targets=(), *, expect: str | list[str] | None = None, module: str | None = None,
                resume: str | None = None, configs=()) -> list[tuple[str, str]]:
    """What a command reads, as (what it is, path): the TARGETs' source files and the modules each imports from its
    own folder, the --expect files (check's may be several, and globs), the CONFIG files (:func:`config_files`), the
    lab module and the report a run resumes from. Found without importing anything."""
    out = [("the CONFIG file", os.path.abspath(f)) for value in configs for f in config_files(value)
           if os.path.isfile(f)]
    for t in targets:
        if not isinstance(t, str):
            continue
        for i, path in enumerate(_target_files(t)):
            out.append((f"the source of TARGET {t}" if i == 0 else f"a module TARGET {t} imports", path))
    for value in ([expect] if isinstance(expect, str) else expect or []):
        files = glob.glob(value, recursive=True) if any(c in value for c in "*?[") else [value]
        out += [("the --expect file", os.path.abspath(f)) for f in files if os.path.isfile(f)]
    if module and os.path.isfile(module):
        out.append(("the --module file", os.path.abspath(module)))
    if resume and os.path.isfile(resume):
        out.append(("the --resume report", os.path.abspath(resume)))
    return out


def _target_files(target: str) -> list[str]:
    if is_config_target(target):  # a config.json TARGET: the file itself
        return [os.path.abspath(target)] if os.path.isfile(target) else []
    mod = target.rpartition(":")[0] if ":" in target else target
    if mod.endswith(".py") or "/" in mod or os.sep in mod:
        file = Path(mod)
    else:
        file = _find_module(mod)
    if file is None or not file.is_file():
        return []
    return [str(file.resolve())] + _siblings_imported(file)


def _find_module(name: str) -> Path | None:
    """The file of module ``name`` on sys.path (and the working directory), found without importing it."""
    parts = name.split(".")
    for entry in ["", *sys.path]:
        base = Path(entry or os.getcwd()).joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _siblings_imported(file: Path) -> list[str]:
    """Files of the modules ``file`` imports from its own folder (``import helpers``, ``from helpers import x``)."""
    try:
        tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    out = []
    for n in sorted(names):
        for candidate in (file.parent / f"{n}.py", file.parent / n / "__init__.py"):
            if candidate.is_file() and candidate.resolve() != file.resolve():
                out.append(str(candidate.resolve()))
    return out
