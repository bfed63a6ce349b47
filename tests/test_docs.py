"""The documentation site (mkdocs.yml, docs/, the pages generated from the code by ropespec/docsite.py): it builds with
warnings as errors (a broken link or anchor fails the build), its reference pages say what the code says, and in
headless Chromium at 1280 and 700 px its home page, a guide and the spec page do not scroll sideways, no formula
carries a scrollbar it does not need, and every link between pages lands on a page and an anchor that exist.
Screenshots land in $ROPESPEC_SCREENSHOTS (default: pytest's tmp dir) for a person to look at."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def _build(root: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(out)], cwd=root, capture_output=True, text=True, timeout=600, env=ENV)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = _build(ROOT, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_the_site_builds_with_warnings_as_errors_and_holds_every_page(site):
    from ropespec import docsite

    for page in ["index.md", "tutorial.md", "findings.md", "development.md", *docsite.pages()]:
        html = site / (page[:-3] + "/index.html" if page != "index.md" else "index.html")
        assert html.exists(), page
    assert "ropespec" in (site / "index.html").read_text()


def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is what makes 'every internal link resolves' true: a page linking to a missing page, or to
    a missing anchor of a page that exists, fails it."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs", ignore=shutil.ignore_patterns("seeds", "__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copy(ROOT / "README.md", root / "README.md")
    (root / "docs" / "seeds").mkdir()
    for bad in ["[a page that is not there](howto/nothing.md)", "[an anchor that is not there](tutorial.md#nowhere)"]:
        (root / "docs" / "findings.md").write_text((ROOT / "docs" / "findings.md").read_text() + f"\n{bad}\n")
        proc = _build(root, tmp_path / "out")
        assert proc.returncode != 0 and ("nothing.md" in proc.stderr or "nowhere" in proc.stderr), proc.stderr[-2000:]


def test_the_reference_pages_say_what_the_code_says(site):
    """Generated, not copied: every command, expectation key, fault word (with a zoo member failing with it) and
    invariant of the code is on its page."""
    from ropespec import cli, docsite
    from ropespec.implementations.zoo import members
    from ropespec.spec import glossary, schema
    from ropespec.spec.invariants import REGISTRY

    pages = docsite.pages()
    for name in cli.parser().commands:
        assert f"## ropespec {name}" in pages["reference/cli.md"], name
    assert "--exitfirst" in pages["reference/cli.md"] and "--atol" in pages["reference/cli.md"]
    for key in schema.RANGES:
        assert f"`{key}`" in pages["reference/expectation.md"], key
    words = pages["reference/words.md"]
    failing = {m.diagnosis: m.name for m in members()}
    for word in glossary.DIAGNOSES:
        row = next(line for line in words.splitlines() if line.startswith(f"| `{word}` |"))
        if word in failing:
            assert failing[word] in row, (word, row)
    for inv in REGISTRY:
        assert f"## {inv}" in pages["reference/invariants.md"], inv
    assert pages["index.md"].startswith((ROOT / "README.md").read_text()[:40])


@pytest.fixture(scope="module")
def browser():
    from tests.test_browser import CHROMIUM, Browser

    if CHROMIUM is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium)")
    b = Browser()
    try:
        yield b
    finally:
        b.close()


#: the pages a person reads first: the home page, the checking guide (its expectation table) and the check command's
#: reference page (its options list), a guide with formulas in prose and long commands, the spec
PAGES = ("index.html", "guide/check/index.html", "reference/check/index.html", "howto/multi-axis/index.html",
         "howto/model/index.html", "reference/spec/index.html")
#: pages whose code boxes fit their column at 1280 px: no command or output line of theirs scrolls sideways (a
#: command's output wraps at the column's edge, docs/style.css; the model guide's was clipped)
FITTING = ("guide/check/index.html", "reference/check/index.html", "howto/model/index.html")


@pytest.mark.parametrize("width", [1280, 700])
def test_in_chromium_nothing_overflows_and_links_land(site, browser, tmp_path, width):
    shots = Path(os.environ.get("ROPESPEC_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    browser.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=1000, deviceScaleFactor=1,
                 mobile=False)
    for page in PAGES:
        path = site / page
        browser.load(path)
        browser.screenshot(shots / f"site-{width}-{page.replace('/', '-').removesuffix('-index.html')}.png")
        assert browser.evaluate("document.documentElement.scrollWidth") <= width, (page, width)
        # a formula wider than its column scrolls sideways in its own box; none scrolls up and down (a scrollbar for
        # the ink of its scripts and fences)
        stray = browser.evaluate("Array.from(document.querySelectorAll('.formula')).filter(f => f.scrollHeight > "
                                 "f.clientHeight + 1).map(f => f.textContent.slice(0, 40))")
        assert stray == [], (page, width, stray)
        if page in FITTING and width == 1280:
            # a code box scrolls sideways in its <pre> or, with the theme's styles, in the <code> inside it
            boxes = "Array.from(document.querySelectorAll('pre, pre > code'))"
            assert browser.evaluate(f"{boxes}.length") > 0 or "reference" in page, page
            wide = browser.evaluate(f"{boxes}.filter(e => e.scrollWidth > e.clientWidth)"
                                    ".map(e => e.textContent.slice(0, 60))")
            assert wide == [], (page, wide)
        if "spec" in page:
            laid_out = browser.evaluate("Array.from(document.querySelectorAll('math')).filter(m => m instanceof "
                                        "MathMLElement && m.getBoundingClientRect().height > 5).length")
            assert laid_out >= 40, laid_out  # the formulas are MathML the browser lays out, not raw text
        links = browser.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        for href in links:
            url = urlsplit(href)
            if url.scheme != "file":
                continue
            target = Path(unquote(url.path))
            target = target / "index.html" if target.is_dir() else target
            assert target.exists() and site in target.parents, (page, href)
            if url.fragment and target.suffix == ".html":
                assert re.search(rf"id=\"?{re.escape(unquote(url.fragment))}[\" >]", target.read_text()), (page, href)

