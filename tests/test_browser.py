"""The HTML spec in a real browser: headless Chromium parses and renders it (skipped, with the reason,
where Chromium is absent; .ci/run installs it). One browser, driven over the DevTools protocol on a
pipe, loads the page and every section; screenshots of each section land in $ROPESPEC_SCREENSHOTS
(default: pytest's tmp dir) for a person to look at."""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ropespec import specdoc
from ropespec.spec import formulas

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")


class Browser:
    """Headless Chromium over --remote-debugging-pipe: commands on fd 3, answers and events on fd 4,
    each a JSON message ended by a NUL byte."""

    def __init__(self):
        to_child, self._w = os.pipe()
        self._r, from_child = os.pipe()

        def fds():  # in the child: the pipe ends at fds 3 and 4 (via high numbers, so neither clobbers the other)
            a, b = 100, 101
            os.dup2(to_child, a)
            os.dup2(from_child, b)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buf, self._id = b"", 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=1100, height=1400, deviceScaleFactor=1,
                  mobile=False)

    def _message(self) -> dict:
        while b"\0" not in self._buf:
            if not select.select([self._r], [], [], 60)[0]:  # a browser that stops answering fails the test
                raise RuntimeError("Chromium did not answer within 60 s")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._message()
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})

    def load(self, path: Path) -> None:
        self.send("Page.navigate", session=True, url=path.as_uri())
        deadline = time.monotonic() + 60
        while self.send("Runtime.evaluate", session=True, expression="document.readyState")["result"]["value"] != "complete":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path.name} did not finish loading within 60 s")

    def evaluate(self, js: str):
        return self.send("Runtime.evaluate", session=True, expression=js, returnByValue=True)["result"]["value"]

    def screenshot(self, out: Path) -> None:
        out.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self._w)
        os.close(self._r)


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory):
    html = specdoc.html_doc()
    path = tmp_path_factory.mktemp("spec") / "spec.html"
    path.write_text(html)
    browser.load(path)
    return html, path, browser.evaluate("document.documentElement.outerHTML")


def _count(tag: str, text: str) -> int:
    return len(re.findall(rf"<{tag}[\s>]", text))


def test_the_browser_parses_the_page_as_written(page):
    """A stray '<' or a broken tag changes the tree the parser builds: every element the renderer wrote
    is in the browser's DOM, as many times."""
    html, _, dom = page
    for tag in ("math", "mi", "mo", "mfrac", "msub", "mtable", "h2", "h3", "li", "tr", "td", "a", "code"):
        assert _count(tag, dom) == _count(tag, html), tag


def test_every_formula_is_rendered_mathml(page, browser):
    """One <math> per formula and definition, each a MathMLElement the browser laid out (a box of its
    own, not raw text), and no raw sympy text anywhere outside a code literal (a docstring may quote Python's
    ``full=True``; sympy's raw text would stand in prose or a formula)."""
    _, _, dom = page
    text = re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<code[^>]*>.*?</code>", " ", dom))
    for bad in ("piecewise", "Piecewise", "False", "True", "\\frac", "\\left", "ell)"):
        assert bad not in text, bad
    n = len(formulas.FORMULAS) + len(formulas.DEFINITIONS) + len(formulas.TOLERANCE)
    assert browser.evaluate("document.querySelectorAll('math').length") == n
    laid_out = browser.evaluate("Array.from(document.querySelectorAll('math')).filter(m => m instanceof MathMLElement"
                                " && m.getBoundingClientRect().width > 10 && m.getBoundingClientRect().height > 5).length")
    assert laid_out == n


def test_the_same_sections_as_the_markdown(page):
    _, _, dom = page
    want = [line[3:] for line in specdoc.markdown().splitlines() if line.startswith("## ")]
    got = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", dom)]
    assert got == ["contents"] + want + ["seed tutorials"]  # the page's own: its contents, the seeds it embeds
    for heading in ("definitions", "tolerances", "lemmas", "tutorial figures"):
        assert heading in got


def test_every_section_renders(page, browser, tmp_path):
    """One screenshot per section (the page cut at each <h2>): each has ink on it."""
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
        browser.load(f)
        png = shots / f"section-{n:02d}-{re.sub(r'[^a-z0-9]+', '-', name.lower())}.png"
        browser.screenshot(png)
        img = Image.open(png).convert("L")
        dark = sum(img.histogram()[:128]) / (img.width * img.height)
        assert dark > 0.003, f"{name}: the screenshot is blank ({dark:.4f} dark)"


@pytest.mark.parametrize("width", [1280, 700])
def test_nothing_overflows_and_every_internal_link_resolves(page, browser, tmp_path, width):
    """At 1280 and 700 px the page never scrolls sideways and nothing sticks out of it: a formula or the figures
    table wider than the viewport scrolls inside its own box, so its last column ("verdict") can be reached. Every
    id is unique, every table-of-contents link and every other '#' link has its target, and no link points at a
    file beside the page (the seeds are embedded): the file stays whole when moved. A screenshot of the top and of
    the figures table at each width lands in $ROPESPEC_SCREENSHOTS."""
    html, path, _ = page
    moved = tmp_path / "elsewhere" / "spec.html"
    moved.parent.mkdir()
    moved.write_text(html)
    browser.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=1000, deviceScaleFactor=1,
                 mobile=False)
    try:
        browser.load(moved)
        assert browser.evaluate("document.documentElement.scrollWidth") <= width
        sticking_out = browser.evaluate(
            "Array.from(document.body.querySelectorAll('*')).filter(e => !e.closest('.scroll, .formula') && "
            f"e.getBoundingClientRect().right > {width} + 1).map(e => e.tagName + ':' + e.textContent.slice(0, 40))")
        assert sticking_out == [], sticking_out
        ids = browser.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
        links = browser.evaluate("Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))")
        local = [h for h in links if not h.startswith(("#", "https://", "http://"))]
        assert local == [], local
        missing = [h for h in links if h.startswith("#") and h[1:] not in ids]
        assert missing == [], missing
        toc = browser.evaluate("Array.from(document.querySelectorAll('nav a')).map(a => a.getAttribute('href'))")
        assert len(toc) > 20 and "#tolerances" in toc and "#seed-tutorials" in toc, toc
        table = "document.querySelector('.scroll')"
        reach = browser.evaluate(f"{table}.scrollWidth <= {table}.clientWidth || "
                                 f"getComputedStyle({table}).overflowX == 'auto'")
        assert reach
        shots = Path(os.environ.get("ROPESPEC_SCREENSHOTS") or tmp_path)
        shots.mkdir(parents=True, exist_ok=True)
        browser.screenshot(shots / f"spec-top-{width}.png")
        browser.evaluate(f"{table}.scrollIntoView()")
        browser.screenshot(shots / f"spec-figures-{width}.png")
    finally:
        browser.send("Emulation.setDeviceMetricsOverride", session=True, width=1100, height=1400, deviceScaleFactor=1,
                     mobile=False)
