"""Each library installed here reads the fixture configs as docs/readings.md says: `ropespec readings`, a process of
its own started from a scratch folder, one library at a time, its verdict and word for every config. A library not
installed is skipped, naming its extra; a version other than the one the table was measured with is checked for a
whole, well-formed table only (its readings may have changed: run the table's command again)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ropespec.implementations import libraries
from ropespec.spec.readings import WORDS

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "tests" / "fixtures" / "readings").glob("*.json")) + [
    ROOT / "tests" / "fixtures" / "configs" / "deepseek-v3.json"]

A, D, U = "agrees", "differs", "unread"
#: (library, version) -> config -> (status, word): docs/readings.md, 2026-12-05
MEASURED = {
    ("transformers", "5.25.0"): {},  # every config agrees: it is the reference reading
    ("mlx-lm", "0.32.2"): {
        "gpt-oss-20b": (D, "truncate"), "llama-3.1-8b-saved-by-transformers-5": (D, "ignored-config"),
        "llama-yarn-mscale-all-dim": (D, "attention-factor"), "llama-yarn-mscale-only": (D, "attention-factor"),
        "phi-3.5-mini": (D, "longrope-switch"), "qwen2.5-7b-yarn-no-original": (D, "original-length"),
        "qwen3-8b-yarn": (D, "attention-factor")},
    ("llama.cpp", "0.3.36"): {
        "gpt-oss-20b": (D, "truncate"), "llama-dynamic-ntk": (D, "ignored-config"), "phi-2": (U, None),
        "phi-3.5-mini": (D, "longrope-switch"), "qwen3-8b-yarn": (D, "attention-factor"), "deepseek-v3": (U, None)},
    ("onnxruntime-genai", "0.18.0"): {
        "gemma-3-4b-text": (D, "ignored-config"), "gpt-oss-20b": (D, "ignored-config"), "llama-dynamic-ntk": (U, None),
        "llama-yarn-mscale-all-dim": (D, "ignored-config"), "llama-yarn-mscale-only": (D, "ignored-config"),
        "phi-2": (U, None), "qwen2.5-7b-yarn-no-original": (D, "ignored-config"),
        "qwen3-8b-yarn": (D, "ignored-config"), "deepseek-v3": (U, None)},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", libraries.names())
def test_each_library_reads_the_fixture_configs_as_the_table_says(name, tmp_path):
    lib = libraries.get(name)
    why = lib.missing()
    if why:
        pytest.skip(why)
    report = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "ropespec", "readings", *map(str, CONFIGS), "--library", name,
                           "--json", str(report)], cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    rows = json.loads(report.read_text())["rows"]
    assert [r["config"] for r in rows] == [p.parent.name if p.stem == "config" else p.stem for p in CONFIGS]
    for r in rows:
        assert r["status"] in (A, D, U) and (r.get("word") is None or r["word"] in WORDS), r
    expected = MEASURED.get((name, lib.version()))
    if expected is None:
        return
    got = {r["config"]: (r["status"], r.get("word")) for r in rows}
    want = {c: expected.get(c, (A, None)) for c in got}
    assert got == want
    assert proc.returncode == (1 if any(s == D for s, _ in want.values()) else 0)


def test_the_table_in_docs_is_the_one_these_versions_give():
    """docs/readings.md's rows are MEASURED's (a table regenerated with other versions updates both), and README's
    counts are the table's."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in (ROOT / "docs" / "readings.md").read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| config")]
    for cells in rows:
        config, label, verdict, word = cells[:4]
        name, version = label.rsplit(" ", 1)
        status = {"agrees": A, "**differs**": D, "not read": U}[verdict]
        want = MEASURED[(name, version)].get(config, (A, None))
        assert (status, word.strip() or None) == want, cells
    configs = {cells[0] for cells in rows}
    differs = {name: sum(1 for c in rows if c[1].startswith(name + " ") and c[2] == "**differs**")
               for name in ("mlx-lm", "llama.cpp", "onnxruntime-genai")}
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert (f"of {len(configs)} real-checkpoint configs" in readme and f"mlx-lm 0.32.2 reads {differs['mlx-lm']} "
            f"otherwise, llama.cpp 0.3.36 {differs['llama.cpp']} and ONNX Runtime GenAI 0.18.0 "
            f"{differs['onnxruntime-genai']}" in readme), differs
