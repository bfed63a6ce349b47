"""docs/findings.md's reproductions are what they say: every ```python block of the page runs in a fresh interpreter
(a process of its own, from an empty folder, so that nothing of ropespec is on its path) and prints the numbers the
page quotes, to the digits the page shows them. What a block prints is read from the page in two ways: a `print(...)`
line's trailing comment that starts with the numbers (`print(x, y)   # 0.707 0.0773: why`), and the sentence after
the block (`prints `11.7687 12.0801` for ...`; `raises `RuntimeError: ...``). A block that saves a file (its first
line `# NAME.py`, as docs/tutorial.md's) defines what a command checks: it runs to exit 0. A block whose library is
not installed is skipped, naming the library."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "findings.md"

#: a number as Python prints it (1, -0.5, 1.0e-7, 0.66499…), or a bool
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|True|False")
_EDGES = "[](){},;:…"


@dataclass(frozen=True)
class Block:
    code: str
    line: int  # the page's line of the block's first code line
    after: str  # the paragraph after the block


def blocks() -> list[Block]:
    text = PAGE.read_text()
    out = []
    for m in re.finditer(r"^([ \t]*)```python\n(.*?)^[ \t]*```[ \t]*$", text, re.S | re.M):
        indent = len(m[1])
        code = "\n".join(ln[indent:] if ln[:indent].strip() == "" else ln for ln in m[2].splitlines()) + "\n"
        rest = text[m.end():].lstrip("\n")
        after = re.split(r"\n[ \t]*\n|```", rest, maxsplit=1)[0]
        out.append(Block(code, text.count("\n", 0, m.start()) + 2, " ".join(after.split())))
    return out


BLOCKS = blocks()


def _token(word: str) -> str | None:
    """A number or bool, once the punctuation around it is off (``[255.0,`` -> ``255.0``; ``0.23:`` -> ``0.23``)."""
    word = word.strip(_EDGES)
    return word if word and _NUMBER.fullmatch(word) else None


def leading_numbers(comment: str) -> list[str]:
    """The numbers a comment starts with: ``0.125 8.0`` of ``# 0.125 8.0``, ``128 False`` of ``# 128 False: dims``."""
    out = []
    for word in comment.lstrip("#").split():
        tok = _token(word)
        if tok is None:
            break
        out.append(tok)
        if word.rstrip().endswith((":", ";")):
            break
    return out


def matches(shown: str, printed: str) -> bool:
    """``printed`` is ``shown`` to the digits ``shown`` has: rounded or cut there (0.0773 of 0.07730…, 0.66499 of
    0.6649911…); a bool or an integer exactly."""
    if shown in ("True", "False") or printed in ("True", "False"):
        return shown == printed
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", shown)
    digits, exponent = len(m[2] or ""), int(m[3] or 0)
    if not m[2] and not m[3]:  # an integer: a count, an index, a length
        return float(printed) == float(shown)
    ulp = 10.0 ** (exponent - digits)
    s, p = float(shown), float(printed)
    rounded = abs(p - s) <= 0.5 * ulp * (1 + 1e-9)
    cut = (p >= 0) == (s >= 0) and 0 <= abs(p) - abs(s) < ulp
    return rounded or cut


def contains(line: str, shown: list[str]) -> bool:
    """The printed line holds the shown numbers one after another."""
    printed = _NUMBER.findall(line)
    return any(all(matches(a, b) for a, b in zip(shown, printed[i:i + len(shown)]))
               for i in range(len(printed) - len(shown) + 1))


def print_comments(code: str) -> list[list[str]]:
    """For each line that calls print, in order, the numbers its trailing comment starts with ([] where none)."""
    out = []
    for line in code.splitlines():
        if re.search(r"\bprint\(", line.split("#", 1)[0]):
            _, _, comment = line.partition("  #")
            out.append(leading_numbers(comment) if comment else [])
    return out


def imports(code: str) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def test_the_page_has_reproductions_and_the_reader_reads_them():
    assert len(BLOCKS) >= 5
    assert leading_numbers("# 0.70703125 0.7071067811865476 0.0773") == ["0.70703125", "0.7071067811865476", "0.0773"]
    assert leading_numbers("# 128 False: dims 64..127 rotate") == ["128", "False"]
    assert leading_numbers("# 0.23: the decoding scores") == ["0.23"]
    assert leading_numbers("# [255.0, 256.0] rounded") == ["255.0", "256.0"]
    assert leading_numbers("# a rotation keeps the norm 1") == []
    assert matches("0.0773", "0.07730122") and matches("0.66499", "0.6649911403656006") and matches("1.0e-7", "1.04e-07")
    assert not matches("0.0773", "0.0775") and not matches("128", "127") and not matches("True", "False")
    assert contains("tensor([[[[0.5403, 0.3877]]]]) 0.6649911403656006", ["0.5403", "0.3877", "0.66499"])


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{b.line}" for b in BLOCKS])
def test_each_reproduction_prints_what_the_page_says(block, tmp_path):
    missing = [name for name in imports(block.code) if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"docs/findings.md line {block.line} imports {', '.join(missing)}, which is not installed")
    assert "ropespec" not in imports(block.code), "a reproduction needs no ropespec"
    proc = subprocess.run([sys.executable, "-c", block.code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)  # generous: transformers' import alone takes seconds on a loaded machine
    where = f"docs/findings.md line {block.line}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    raised = re.match(r"raises `([^`]+)`", block.after)
    if raised:
        assert proc.returncode != 0 and raised[1] in proc.stderr, where
        return
    assert proc.returncode == 0, where
    if re.match(r"# \w+\.py\b", block.code):  # a file a command checks: it defines, and prints nothing
        return
    lines = proc.stdout.splitlines()
    assert lines, f"printed nothing: {where}"
    comments = print_comments(block.code)
    for k, shown in enumerate(comments):
        if not shown:
            continue
        # one print call, one line (no loop): the k-th line; else any line
        candidates = [lines[k]] if len(comments) == len(lines) else lines
        assert any(contains(line, shown) for line in candidates), f"{' '.join(shown)} not printed: {where}"
    if block.after.startswith("prints "):
        sentence = re.split(r"\.\s", block.after + " ", maxsplit=1)[0]  # its first sentence: what it prints
        quoted = [q for q in re.findall(r"`([^`]+)`", sentence) if _NUMBER.search(q)]
        assert quoted, f"the sentence after the block quotes no numbers: {sentence}"
        for q in quoted:
            assert any(contains(line, _NUMBER.findall(q)) for line in lines), f"`{q}` not printed: {where}"
