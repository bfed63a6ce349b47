"""The executable spec: every invariant proven, checked and failed; facts hold; docs/SPEC.md is current."""

import dataclasses
import re
from pathlib import Path

import pytest

from ropespec.implementations.zoo import members
from ropespec.properties.framework import all_properties
from ropespec.reference.facts import FACTS, SEEDS
from ropespec import specdoc
from ropespec.cli import main
from ropespec.spec import formulas, proofs
from ropespec.spec.invariants import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def test_every_invariant_has_a_proof_a_property_and_a_zoo_member():
    checked = {p.invariant for p in all_properties()}
    failed = {t.partition(":")[0] for m in members() for t in m.targets}
    missing = []
    for inv in REGISTRY:
        if inv not in proofs.PROOFS:
            missing.append(f"{inv}: no proof entry (symbolic, definition or tested only)")
        if inv not in checked:
            missing.append(f"{inv}: no property")
        if inv not in failed:
            missing.append(f"{inv}: no zoo member")
        if inv not in formulas.FORMULAS:
            missing.append(f"{inv}: no formula")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("fact", FACTS, ids=[f.id for f in FACTS])
def test_tutorial_fact(fact):
    assert fact.holds(), f"{fact.claim}: stated {fact.stated}, computed {fact.computed()}"


def test_docs_spec_md_is_current():
    on_disk = (ROOT / "docs" / "SPEC.md").read_text()
    assert on_disk == specdoc.markdown(), "docs/SPEC.md is stale: run  ropespec spec --out docs/SPEC.md"


def test_html_is_self_contained(tmp_path):
    """Nothing is loaded: no scripts, stylesheets or images; the only URLs are the MathML namespace and
    the sources' links a reader may follow."""
    out = tmp_path / "spec.html"
    assert main(["spec", "--format", "html", "--out", str(out)]) == 0
    text = out.read_text()
    assert "<math" in text and "<mfrac>" in text
    assert "<script" not in text and "<link" not in text and "src=" not in text and "<img" not in text
    urls = set(re.findall(r"https?://[^\s'\"<>]+", text)) - {"http://www.w3.org/1998/Math/MathML"}
    hrefs = set(re.findall(r"href='(https?://[^']+)'", text))
    assert urls == hrefs and all(u.startswith(("https://arxiv.org/abs/", "https://github.com/")) for u in urls), urls - hrefs


def test_the_record_is_what_the_proofs_give_today():
    """docs/proofs.json (what ropespec spec renders) matches the proofs now: every proof, its kind, and every
    mutation it is about failing it. Its results and accounts are compared where each proof runs
    (tests/test_proofs.py::test_proof_verifies) and each mutation's failure is asserted there too
    (test_proof_fails_when_what_it_is_about_is_broken), so nothing is proven twice here."""
    record = specdoc.load_record()
    assert record, "no docs/proofs.json: run  ropespec proofs --record docs/proofs.json"
    assert set(record["results"]) == set(proofs.ALL)
    for pid, pr in proofs.ALL.items():
        got = record["results"][pid]
        assert got["kind"] == pr.kind, pid
        assert got["proven"] == (pr.fn is not None), f"{pid}: stale record"
        if pr.fn is None:
            assert got["account"] == pr.note, f"{pid}: stale record"
        if pr.fn is not None and pr.about:
            assert got["mutants"] == [len(pr.about), len(pr.about)], f"{pid}: stale record"
    assert list(record["results"]) == list(proofs.ALL), "the record lists the proofs in their order (the lemmas last)"
    assert record["formulas"] == formulas.printed(), \
        "stale formulas in the record: run  ropespec proofs --record docs/proofs.json"


def test_the_document_is_the_same_with_or_without_the_record_of_formulas(monkeypatch):
    """The record's formulas are what sympy prints (above), and the document built from them is the one built by
    printing them now: one document whichever way it is made."""
    fast = specdoc.markdown(), specdoc.html_doc()
    record = specdoc.load_record()
    bare = {**record, "results": {pid: {k: v for k, v in got.items() if k != "proven"}
                                  for pid, got in record["results"].items()}}
    del bare["formulas"]
    monkeypatch.setattr(specdoc, "load_record", lambda: bare)
    assert (specdoc.markdown(), specdoc.html_doc()) == fast


def test_rendering_imports_no_sympy():
    """What keeps ropespec spec within its 2 s: the record carries what sympy printed and proved, so rendering
    imports none of it (ropespec proofs, the one command that runs sympy, writes the record)."""
    import subprocess
    import sys
    code = ("import sys, contextlib, io\n"
            "from ropespec.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['spec']) == 0 and main(['spec', '--format', 'html']) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sympy' or m.startswith('ropespec.spec.proofs')"
            " or m == 'ropespec.spec.formulas'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_rendering_runs_no_proof(monkeypatch):
    """ropespec spec reports the record; it proves nothing itself (that is what keeps it fast)."""
    def boom(*a, **k):
        raise AssertionError("a proof ran while rendering")
    for name in ("verify", "run_all", "holds_under"):
        monkeypatch.setattr(proofs, name, boom)
    for pid, pr in proofs.ALL.items():  # and no proof's own function, whichever module it is written in
        if pr.fn is not None:
            monkeypatch.setitem(proofs.ALL, pid, dataclasses.replace(pr, fn=boom))
    assert "## lemmas" in specdoc.markdown()
    assert "<h2" in specdoc.html_doc()


def test_formulas_print_as_written():
    """The defects once seen: a formula printed as False, R lowercased, ell spelled out, raw Piecewise,
    an unescaped '<', the gradient rotated the wrong way round, 25165824 as 2.51658e+07."""
    from xml.dom import minidom

    md, html = specdoc.markdown(), specdoc.html_doc()
    for inv in formulas.FORMULAS:
        minidom.parseString(f"<math xmlns='http://www.w3.org/1998/Math/MathML'>{formulas.mathml(inv)}</math>")
        assert formulas.latex(inv) not in ("False", "True"), inv
    assert "<mi>R</mi>" in formulas.mathml("rope.conformance")
    assert "\\ell" in formulas.latex("scaling.dynamic-length") and "ell" not in formulas.mathml("scaling.dynamic-length")
    assert "piecewise" not in html.lower() and "<mo><</mo>" not in html
    assert formulas.latex("autograd.inverse-rotation").endswith("R{\\left(- p \\theta \\right)} g")
    assert "\\| ||" not in md and "| 25165824 |" in md and "e+07" not in md
    for inv, cond in (("rope.locality", "notin"), ("attention.causal", "j > i"), ("sinusoidal.distinct", "m \\ne n")):
        assert cond in formulas.latex(inv), inv
    assert "\\max\\left(L, \\ell\\right)" in formulas.latex("scaling.dynamic-length")


def test_spec_with_an_implementation_shows_verdicts(tmp_path):
    """The document is written whole, and the exit code is its verdicts' as ropespec check's: a failing
    implementation exits 1 (exit 0 means what was checked held)."""
    out = tmp_path / "spec.md"
    assert main(["spec", "--impl", "ropespec.implementations.zoo.rope.backwards:make", "--expect", "llama2-7b", "--out", str(out)]) == 1
    text = out.read_text()
    assert "verdict: **fail (direction)**" in text
    assert "verdict: **pass**" in text


def test_sources_are_links_a_reader_can_open():
    """Every '#n' of a source is a link to its repository; seeds link to docs/seeds, which exist."""
    md = specdoc.markdown()
    for line in (x for x in md.splitlines() if "sources: " in x):
        bare = re.findall(r"(?<!\[)(?<!\[PR )#\d+", re.sub(r"\[[^\]]*\]\([^)]*\)", "", line))
        assert not bare, line
    for path in set(re.findall(r"\]\((seeds/[^)]+)\)", md)):
        assert (ROOT / "docs" / path).is_file(), path
    assert specdoc.link_sources("transformers #25104, PR #33129").count("huggingface/transformers") == 2


def test_seed_links_follow_the_file(tmp_path):
    """Written elsewhere than docs/, the Markdown's seed links still open; the HTML embeds the seeds and links to
    its own copy, so that it stays whole wherever it is moved."""
    md = tmp_path / "sub" / "spec.md"
    md.parent.mkdir()
    assert main(["spec", "--out", str(md)]) == 0
    links = set(re.findall(r"\]\(([^h)][^)]*)\)", md.read_text()))
    assert links and all((md.parent / x).resolve().is_file() for x in links), links
    out = tmp_path / "sub" / "spec.html"
    assert main(["spec", "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    links = set(re.findall(r"href='([^h'][^']*)'", page))
    assert links and all(x.startswith("#") for x in links), links
    for key in SEEDS:
        assert f"href='#seed-{key}'" in page and f"id='seed-{key}'" in page, key


def test_every_fact_quotes_its_own_seed_verbatim():
    """Facts were tagged with the wrong tutorial and numbers the project computed were listed as stated:
    each quote must be found, word for word, in the seed it is tagged with, and a stated number must be
    one the quote gives."""
    seeds = {k: (ROOT / "docs" / "seeds" / v.split(" ")[0]).read_text() for k, v in SEEDS.items()}
    digits = {5: "五", 30: "三十", 63: "六十三"}
    for f in FACTS:
        assert f.quote in seeds[f.seed], f"{f.id}: not in seed {f.seed}: {f.quote!r}"
        if f.stated is not None and not f.demo_specific:
            shown = {f"{f.stated:g}", f"{f.stated:.{f.decimals}f}", digits.get(f.stated, "\0")}
            assert any(s in f.quote for s in shown), f"{f.id}: {f.stated} is not what the quote says"


def test_html_has_the_markdowns_seed_column_and_legend_and_cites_only_what_opens():
    html, md = specdoc.html_doc(), specdoc.markdown()
    for text in (html, md):
        assert "the tutorial says" in text and "tutorial's value" in text
        assert "000_e099704d4a35ee33.txt" in text  # the Markdown links the file, the HTML heads its embedded copy
        for unopenable in ("REFERENCE.md", "ARCHITECTURE.md", "shared/design", "design note"):
            assert unopenable not in text, unopenable
