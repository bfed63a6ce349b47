"""Reading the project's code for comparisons of a registered object's name (a family, a form, a layout): the code
asks the registry's object instead, and the tests that say so count what is left with these helpers."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
#: the project's code (the tests compare what reports say, which is theirs to do)
CODE = ("spec", "reference", "properties", "implementations", "ropespec", "benchmarks", "conftest.py")


def code_files(roots=CODE, base: Path = ROOT) -> list[Path]:
    out = []
    for name in roots:
        p = base / name
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def named(words: tuple[str, ...], exact: bool = False) -> Callable[[ast.AST], bool]:
    """Whether a side of a comparison is called one of ``words`` (an attribute, a name, a constant key), or with
    ``exact=False`` has one of them in its name (``shape.form``, ``rows``, ``case["layout"]``)."""
    has = (lambda n: n in words) if exact else (lambda n: any(w in n for w in words))

    def test(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return has(node.attr)
        if isinstance(node, ast.Name):
            return has(node.id)
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in words

    return test


def comparisons(path: Path, vocabulary: set[str], about: Callable[[ast.AST], bool]) -> list[ast.Compare]:
    """Every comparison in ``path`` of a side ``about`` says is one of these names with a word of ``vocabulary``
    (alone or in a tuple, list or set)."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        words = {e.value for s in sides for e in ([s] + list(getattr(s, "elts", [])))
                 if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        if words & vocabulary and any(about(s) for s in sides):
            hits.append(node)
    return hits
