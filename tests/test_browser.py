"""The HTML spec in a real browser: headless Chromium parses and renders it (skipped, with the reason,
where Chromium is absent; .ci/run installs it). Screenshots of every section land in
$ROPESPEC_SCREENSHOTS (default: pytest's tmp dir) for a person to look at."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ropespec import specdoc

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")


def _chromium(*args: str) -> str:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("spec")
    html = specdoc.html_doc()
    path = out / "spec.html"
    path.write_text(html)
    return html, path, _chromium("--dump-dom", path.as_uri())


def _count(tag: str, text: str) -> int:
    return len(re.findall(rf"<{tag}[\s>]", text))


def test_the_browser_parses_the_page_as_written(page):
    """A stray '<' or a broken tag changes the tree the parser builds: every element the renderer wrote
    is in the browser's DOM, as many times."""
    html, _, dom = page
    for tag in ("math", "mi", "mo", "mfrac", "msub", "mtable", "h2", "h3", "li", "tr", "td", "a", "code"):
        assert _count(tag, dom) == _count(tag, html), tag


def test_no_raw_sympy_and_every_formula_is_mathml(page):
    html, _, dom = page
    text = re.sub(r"<[^>]+>", " ", dom)
    for bad in ("piecewise", "Piecewise", "False", "True", "\\frac", "\\left", "ell)"):
        assert bad not in text, bad
    # one <math> per formula: every invariant, every definition
    from spec import formulas

    assert _count("math", dom) == len(formulas.FORMULAS) + len(formulas.DEFINITIONS)


def test_the_same_sections_as_the_markdown(page):
    _, _, dom = page
    md = specdoc.markdown()
    want = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    got = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", dom)]
    assert got == want
    for heading in ("definitions", "tolerances", "lemmas", "tutorial figures"):
        assert heading in got


def test_every_section_renders(page, tmp_path):
    """One screenshot per section (the page cut at each <h2>): each has ink on it, and keeps it."""
    from PIL import Image

    html, _, _ = page
    shots = Path(os.environ.get("ROPESPEC_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    head, _, body = html.partition("<body>")
    parts = re.split(r"(?=<h2 )", body)
    assert len(parts) > 5
    for n, part in enumerate(parts[1:], 1):
        name = re.sub(r"<[^>]+>", "", re.search(r"<h2[^>]*>(.*?)</h2>", part)[1])
        f = tmp_path / f"section-{n}.html"
        f.write_text(head + "<body>" + part.replace("</body></html>", "") + "</body></html>")
        png = shots / f"section-{n:02d}-{re.sub(r'[^a-z0-9]+', '-', name.lower())}.png"
        _chromium(f"--screenshot={png}", "--window-size=1100,1400", f.as_uri())
        img = Image.open(png).convert("L")
        dark = sum(img.histogram()[:128]) / (img.width * img.height)
        assert dark > 0.003, f"{name}: the screenshot is blank ({dark:.4f} dark)"
