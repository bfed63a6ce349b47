"""The architecture, read off the code: imports go one way (spec <- reference <- properties; spec <- implementations
<- properties <- ropespec), no module imports itself back through another, and a function imports a project module
only where that keeps an optional or heavy dependency lazy (the reasons are listed below).

Every module of the five packages is parsed (AST), its imports at every depth, and resolved to modules:
``from implementations import arrays`` is the module ropespec.implementations.arrays; ``from implementations import
load_implementation`` is the package implementations (its ``__init__``), which imports its submodules: a submodule that
imports its own package that way closes a circle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the layers: the repository's folders, each installed as a subpackage of ropespec (pyproject.toml's package-dir);
#: "ropespec" is the command line and API, the ropespec folder less these four
PACKAGES = ("spec", "reference", "implementations", "properties", "ropespec")
LAYERS = PACKAGES[:-1]
#: what each layer may import of the others (its own package aside)
MAY_IMPORT = {"spec": set(), "reference": {"spec"}, "implementations": {"spec"},
              "properties": {"spec", "reference", "implementations"},
              "ropespec": {"spec", "reference", "implementations", "properties"}}
#: function-local imports of project modules, each for a reason: an optional dependency or a slow import kept lazy
LAZY = {
    ("ropespec.pytest_plugin", "*"): "loaded by every pytest run where ropespec is installed: a run that uses none "
                                     "of it pays nothing for it",
    ("ropespec", "*"): "its names load on first use (PEP 562): the pytest plugin, loaded by every pytest run, imports "
                       "the package",
    ("ropespec.commands.proofs", "ropespec.spec.proofs"): "sympy takes 0.5 s to import: only this command runs it",
    ("ropespec.commands.proofs", "ropespec.spec.formulas"): "sympy, as above",
    ("ropespec.specdoc", "ropespec.spec.formulas"): "sympy, as above: the spec renders the proofs' record, which carries "
                                                    "the printed formulas, and prints them itself only without one",
    ("ropespec.specdoc", "ropespec.spec.proofs"): "sympy, as above: the proofs' kinds and notes are the record's, read "
                                                  "from the proofs only without one",
    ("ropespec.implementations.zoo.rope.autograd_sign", "ropespec.implementations.torch_rope"): "torch is optional",
    ("ropespec.implementations.zoo.rope.returns_complex", "ropespec.implementations.torch_rope"): "torch is optional",
    ("ropespec.implementations.triton_rope", "ropespec.implementations.triton_kernels"): "triton is optional, and its kernels must be "
                                                                       "defined after a CPU worker switched Triton's "
                                                                       "interpreter on",
    ("ropespec.implementations.triton_mode", "ropespec.implementations.triton_canary"): "triton is optional, and the canary's kernel "
                                                                      "must be defined after a CPU worker switched "
                                                                      "Triton's interpreter on",
}


def installed(folder_name: str) -> str:
    """A module's installed name from its name in the repository's folders: spec.tables is ropespec.spec.tables."""
    return folder_name if folder_name.split(".")[0] == "ropespec" else f"ropespec.{folder_name}"


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "ropespec"


def modules(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in (root / pkg).rglob("*.py"):
            name = ".".join(f.relative_to(root).with_suffix("").parts)
            out[installed(name.removesuffix(".__init__"))] = f
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for every project import of ``name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def resolve(target: str, attribute: str | None) -> str | None:
        if attribute and f"{target}.{attribute}" in known:
            return f"{target}.{attribute}"
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def walk(node, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] in PACKAGES:
                        found.append((resolve(alias.name, None), child.lineno, inner))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: from . import x
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - child.level + 1] + ([base] if base else []))
                if base.split(".")[0] in PACKAGES:
                    for alias in child.names:
                        found.append((resolve(base, alias.name), child.lineno, inner))
            walk(child, inner)

    walk(tree, False)
    return [(m, line, inner) for m, line, inner in found if m and m != name]


def graph(root: Path = ROOT) -> dict[str, list[tuple[str, int, bool]]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def circles(edges: dict[str, list]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w, _, _ in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def layer_violations(edges: dict[str, list]) -> list[str]:
    bad = []
    for name, deps in edges.items():
        here = layer(name)
        for dep, line, _ in deps:
            other = layer(dep)
            if other != here and other not in MAY_IMPORT[here]:
                bad.append(f"{name}:{line} imports {dep}: {here} may import {sorted(MAY_IMPORT[here]) or 'nothing'}")
    return bad


def local_imports(edges: dict[str, list]) -> list[str]:
    return [f"{name}:{line} imports {dep} inside a function" for name, deps in edges.items() for dep, line, inner in deps
            if inner and (name, "*") not in LAZY and (name, dep) not in LAZY]


def property_module_imports(edges: dict[str, list]) -> list[str]:
    """A property module (ropespec.properties.test_*) is imported by pytest under the name its path gives, which is not
    the installed one in a user's project (``pytest properties``): a module importing it runs it a second time, and
    its properties are registered twice. What properties share lives in a module of its own."""
    return [f"{name}:{line} imports the test module {dep}" for name, deps in edges.items() for dep, line, _ in deps
            if dep.rpartition(".")[2].startswith("test_")]


EDGES = graph()


def test_no_module_imports_itself_back():
    assert circles(EDGES) == []


def test_imports_go_one_way_between_the_layers():
    assert layer_violations(EDGES) == []


def test_no_module_imports_a_property_module():
    assert property_module_imports(EDGES) == []


def test_a_function_imports_a_project_module_only_to_keep_a_dependency_lazy():
    assert local_imports(EDGES) == []
    for (name, dep), why in LAZY.items():  # every exception is still there, and says why
        assert why and name in EDGES and (dep == "*" or any(d == dep and inner for d, _, inner in EDGES[name])), name


def test_the_checks_fail_on_a_circle_and_on_a_back_import(tmp_path):
    """A scratch copy of two modules with an import added each way: both checks say so."""
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "spec" / "a.py").write_text("from ropespec.spec import b\n")
    (tmp_path / "spec" / "b.py").write_text("def f():\n    from ropespec.spec.a import g\n")
    (tmp_path / "implementations" / "c.py").write_text("from ropespec.properties import framework\n")
    edges = graph(tmp_path)
    assert circles(edges) == [["ropespec.spec.a", "ropespec.spec.b"]]
    assert layer_violations(edges) == ["ropespec.implementations.c:1 imports ropespec.properties: implementations may "
                                       "import ['spec']"]


#: every Python file of the repository that imports the project: the packages, their tests, benchmarks, examples
PYTHON = sorted(p for p in ROOT.rglob("*.py") if not {".venv", ".ci-venv", "build", ".git"} & set(p.relative_to(ROOT).parts))


def folder_imports(paths) -> list[str]:
    """Imports of a folder's own name (``from spec.tables import x``): installed, the folders are ropespec.spec, ...,
    and no top-level spec, reference, properties or implementations exists (or it is another project's)."""
    bad = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad += [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{node.lineno} imports {n}"
                    for n in names if n.split(".")[0] in LAYERS]
    return bad


def test_the_project_is_imported_by_its_installed_name_alone():
    assert folder_imports(PYTHON) == []


def test_the_count_sees_an_import_of_a_folders_own_name(tmp_path):
    stray = tmp_path / "stray.py"
    stray.write_text("import reference\nfrom spec.tables import frequencies\nfrom ropespec.spec import tables\n")
    assert folder_imports([stray]) == ["stray.py:1 imports reference", "stray.py:2 imports spec.tables"]


def test_every_package_is_installed():
    """pyproject.toml lists the wheel's packages (a package-dir mapping cannot be searched): each folder with an
    __init__.py is one of them, under its installed name, and nothing else is."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {installed(".".join(p.parent.relative_to(ROOT).parts)) for pkg in PACKAGES
               for p in (ROOT / pkg).rglob("__init__.py")}
    assert listed == folders


def test_no_tracker_history_in_code_or_messages():
    """Comments and messages state the rule and why, in the present tense; the tracker's history is git's."""
    said = re.compile(r"\bissues?\s+#?\d+", re.I)
    files = [p for p in ROOT.rglob("*.py") if not {".venv", ".ci-venv", "build"} & set(p.relative_to(ROOT).parts)]
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if said.search(line)]
    assert not hits, hits


#: the modules that read a command line's namespace or pytest's option object: the request's builders
BUILDERS = ("ropespec/request.py",)
_READS_OPTIONS = re.compile(r"argparse\.Namespace|\bargs\.|getattr\(args\b|\.getoption\(|\bvars\(args\)")


def test_only_the_builders_read_a_namespace_or_pytests_options():
    """What a check is, is one typed request (ropespec/request.py), built once from the command line, once from the API's
    keywords, once from pytest's options: no other module of the package reads argparse's namespace or pytest's option
    object (which 14 modules once read, each with getattr defaults of its own)."""
    from code_scan import code_files

    readers = [f"{p.relative_to(ROOT)}:{i}" for p in code_files(("spec", "reference", "properties", "implementations",
                                                                 "ropespec"))
               if str(p.relative_to(ROOT)) not in BUILDERS
               for i, line in enumerate(p.read_text().splitlines(), 1) if _READS_OPTIONS.search(line)]
    assert readers == [], readers
