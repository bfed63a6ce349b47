"""The documentation as the tests read it: README and every hand-written page of the documentation site under docs/
(the pages generated from the code, ropespec/docsite.py, say what the code says; docs/SPEC.md is `ropespec spec`'s
output and docs/transformers_sweep.md and docs/plumbing_sweep.md the sweeps', each tested where it is made)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_MADE = ("SPEC.md", "transformers_sweep.md", "plumbing_sweep.md")
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md")
                                     if p.name not in _MADE and "seeds" not in p.relative_to(ROOT / "docs").parts)]
TEXT = "\n\n".join(p.read_text() for p in PAGES)


def page(relative: str) -> str:
    """One page's text: ``README.md`` or a path under docs/."""
    return (ROOT / relative).read_text() if relative == "README.md" else (ROOT / "docs" / relative).read_text()


def python_files() -> dict[str, str]:
    """The files the documentation's examples save (a ```python block that starts ``# NAME.py``), by name; a file
    shown twice is one file, shown alike."""
    out: dict[str, str] = {}
    for m in re.finditer(r"```python\n(# (\w+\.py)\b.*?)```", TEXT, re.S):
        code, name = m[1], m[2]
        assert out.get(name, code) == code, f"{name} is shown twice, differently"
        out[name] = code
    return out
