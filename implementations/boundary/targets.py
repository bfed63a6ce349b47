"""Loading a TARGET: a file's or a module's attribute (``path.py:name``, ``package.module:name``), the old folder
names read as ropespec's installed ones (a zoo member by its name as its family's folder holds it), and what a loaded callable says of itself."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Callable

from ropespec.implementations.adapters.hf_model import config_file
from ropespec.implementations.contract import TargetError, call_signature, mode_of, where
from ropespec.implementations.families import Form
from ropespec.spec.expectation import AXES_KINDS


# -- loading ---------------------------------------------------------------------------------------
def _import_file(path: Path):
    name = f"_ropespec_target_{abs(hash(str(path.resolve())))}"
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # a TARGET file imports its sibling modules
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise TargetError(f"{path}: import failed: {_import_error(e)}") from None
    return module


def _import_error(e: Exception) -> str:
    """What an import raised, pointing at the user's line: a SyntaxError's own file and line (its traceback ends
    in importlib's machinery), else the innermost frame of the user's code."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"{type(e).__name__}: {e.msg} at {Path(e.filename).name}:{e.lineno}"
    return f"{type(e).__name__}: {e}{where(e)}"


#: the repository's folders, installed as subpackages of ropespec: a TARGET may still name a module by its folder
FOLDERS = ("spec", "reference", "properties", "implementations")


def installed_target(target):
    """The TARGET ropespec loads for ``target``: ``implementations.numpy_rope:make`` names the shipped code by its
    folder, which installs as ``ropespec.implementations``, so it reads as ``ropespec.implementations.numpy_rope:make``
    unless a package of that top-level name is importable here (a user's own ``implementations``). Anything else is
    returned as it is."""
    if not isinstance(target, str):
        return target
    mod, sep, _ = target.rpartition(":")
    first = mod.split(".")[0]
    if (not sep or first not in FOLDERS or "/" in mod or "\\" in mod or mod.endswith(".py")
            or importlib.util.find_spec(first) is not None):
        return _zoo_member(target)
    return _zoo_member(f"ropespec.{target}")


_ZOO = "ropespec.implementations.zoo"


def _zoo_member(target: str) -> str:
    """A zoo member named as the zoo held it before its family's folder (``ropespec.implementations.zoo.NAME:make``)
    reads as the module in that folder (``ropespec.implementations.zoo.rope.NAME:make``); anything else as it is."""
    mod, _, name = target.rpartition(":")
    package, _, member = mod.rpartition(".")
    if package != _ZOO or member.startswith("_"):
        return target
    zoo = Path(importlib.util.find_spec(_ZOO).origin).parent
    if (zoo / f"{member}.py").is_file() or (zoo / member).is_dir():
        return target
    found = sorted(zoo.glob(f"*/{member}.py"))
    return f"{_ZOO}.{found[0].parent.name}.{member}:{name}" if len(found) == 1 else target


def load_module(mod: str):
    """Import ``path/to/file.py`` or ``package.module``; one-line TargetError when impossible."""
    if mod.endswith(".py") or "/" in mod or "\\" in mod or Path(mod).is_file():
        path = Path(mod)
        if not path.is_file():
            raise TargetError(f"{mod}: no such file")
        if path.suffix != ".py":
            raise TargetError(f"{mod}: not a Python file (a TARGET is path/to/file.py:name or package.module:name)")
        return _import_file(path)
    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and mod.startswith(e.name):
            raise TargetError(f"{mod}: no such module") from None
        raise TargetError(f"{mod}: import failed: ModuleNotFoundError: {e}") from None
    except Exception as e:
        raise TargetError(f"{mod}: import failed: {_import_error(e)}") from None


def _attribute(module, spec: str, mod: str, name: str):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{spec}: {mod} has no attribute {part!r}")
        obj = getattr(obj, part)
    return obj


def is_config_target(target) -> bool:
    """A TARGET that is a model's config.json (``path/config.json``, no ``:name``): the model family builds a tiny model
    of its own class from it."""
    return isinstance(target, str) and target.endswith(".json") and ":" not in target


def resolve(ref: dict) -> Callable:
    """The callable a reference names: ``{"target": "file.py:name" | "module:name"}``, or a function
    object's ``{"module", "file", "qualname"}`` (imported by module name, else from its file)."""
    if "target" in ref:
        spec = ref["target"]
        if is_config_target(spec):  # a config.json: a tiny model of its own class (the model family)
            if not Path(spec).is_file():
                raise TargetError(f"{spec}: no such file")
            return config_file(spec)
        mod, sep, name = spec.rpartition(":")
        if not sep or not mod or not name:
            raise TargetError(f"{spec}: expected path/to/file.py:name or package.module:name")
        first, _, rest = spec.partition(":")
        if ":" in rest and Path(first).is_file():  # good.py:apply:extra
            raise TargetError(f"{spec}: a TARGET has one colon, {first}:name (a dotted name reaches an attribute: "
                              f"{first}:{rest.replace(':', '.')})")
        obj = _attribute(load_module(mod), spec, mod, name)
        if not callable(obj):
            raise TargetError(f"{spec}: {name} is a {type(obj).__name__}, not callable")
        return obj
    module = None
    if ref.get("module") and ref["module"] != "__main__":
        try:
            module = importlib.import_module(ref["module"])
        except Exception:
            module = None
    if module is None:
        if not ref.get("file"):
            raise TargetError(f"{ref['qualname']}: its module {ref.get('module')!r} cannot be imported")
        module = _import_file(Path(ref["file"]))
    return _attribute(module, f"{ref.get('file') or ref['module']}:{ref['qualname']}", ref.get("module") or "", ref["qualname"])


def describe_loaded(obj: Callable, form: Form, label: str, layout: str = "nd") -> dict:
    """What the parent needs to know of a loaded TARGET: its mode, declared failures, the precision class a factory
    promises, and a one-line error when its signature fits no contract of its form."""
    info = {"mode": None, "expected_failures": {}, "error": None}
    try:
        info["mode"] = mode_of(obj)
    except TargetError as e:
        info["error"] = f"{label}: {e}"
        return info
    if info["mode"] == "factory" and form.plain_if is not None and form.plain_if(obj):
        info["mode"] = "plain"
    ef = getattr(obj, "expected_failures", {})
    info["expected_failures"] = {str(k): str(v) for k, v in dict(ef).items()} if isinstance(ef, dict) else {}
    promise = getattr(obj, "promise", None)  # the precision class a factory promises: angle/inv_freq dtypes
    if isinstance(promise, dict):
        info["promise"] = {k: str(v) for k, v in promise.items() if k in ("angle_dtype", "inv_freq_dtype")}
    axes = getattr(obj, "axes", None)  # the multi-axis kinds a factory computes: drawn expectations include them
    if isinstance(axes, (tuple, list)):
        info["axes"] = [str(k) for k in axes if k in AXES_KINDS]
    if info["mode"] == "plain":
        want = form.signature_in(layout)
        if want is None:
            info["error"] = f"{label}: a {form.label} TARGET is a factory make(expect)"
            return info
        try:
            sig = call_signature(obj)
        except (TypeError, ValueError):
            return info
        n = sum(1 for p in sig.parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        if n not in want[0]:
            info["error"] = f"{label}: must take {want[1]} or (expect); its signature is {sig}"
    return info
