"""examples/multi_axis.py's plain numpy functions (Qwen2-VL's chunked M-RoPE, Qwen3-VL's interleaved one, FLUX's
per-axis 3-D RoPE), written as a user writes them from each model's code, pass from a scratch folder; each of their
buggy twins in examples/multi_axis_bugs.py fails with the word its docstring names and no other."""

import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import multi_axis_bugs  # noqa: E402

from ropespec.cli import main  # noqa: E402

#: one run per expectation: the correct function and its twins, under the model's preset
RUNS = {
    "qwen2-vl-7b": ["qwen2_vl", "qwen2_vl_interleaved", "qwen2_vl_sections_reversed", "qwen2_vl_per_axis",
                    "qwen2_vl_text_only"],
    "qwen3-vl-8b": ["qwen3_vl", "qwen3_vl_chunked"],
    "flux.1-dev": ["flux", "flux_hw_swapped", "flux_one_ladder", "flux_one_based"],
    "dinov3-vitl16": ["dinov3", "dinov3_corners"],  # real coordinates: patch centres in [-1, 1] times 2 pi
    "ltx_video_48.json": ["ltx_video", "ltx_video_chunked"],  # ascending ladders dealt per frequency
    "hunyuanocr": ["hunyuan_xdrope", "hunyuan_vl_sections_doubled"],  # four axes of one NTK-alpha ladder (vLLM's XD-RoPE)
}


def _word(name: str) -> str:
    """The word a twin's docstring names first ('axes-chunked: ...')."""
    return getattr(multi_axis_bugs, name).__doc__.split(":")[0].strip()


def _check(tmp_path, monkeypatch, capsys, targets, *options):
    """ropespec check from the scratch folder, through its entry function in this process (the TARGETs run in worker
    processes, as from a shell): its exit code and output, and the JSON report."""
    for f in ("multi_axis.py", "multi_axis_bugs.py", "ltx_video_48.json"):
        shutil.copy(ROOT / "examples" / f, tmp_path / f)
    monkeypatch.chdir(tmp_path)
    code = main(["check", *targets, *options, "--json", "report.json"])
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err), json.loads((tmp_path / "report.json").read_text())


@pytest.mark.parametrize("preset", list(RUNS))
def test_examples_pass_and_twins_fail_with_their_word(tmp_path, monkeypatch, capsys, preset):
    names = RUNS[preset]
    targets = [f"{'multi_axis' if i == 0 else 'multi_axis_bugs'}.py:{n}" for i, n in enumerate(names)]
    proc, report = _check(tmp_path, monkeypatch, capsys, targets, "--expect", preset)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    by_target = {impl["target"].split(":")[1]: impl["results"] for impl in report["implementations"]}
    correct = by_target[names[0]]
    assert [r for r in correct if r["status"] in ("fail", "error")] == [], names[0]
    assert any(r["invariant"] == "axes.separation" and r["status"] == "pass" for r in correct)
    for twin in names[1:]:
        failed = [r for r in by_target[twin] if r["status"] in ("fail", "error")]
        assert failed, f"{twin} passed"
        assert {r["diagnosis"] for r in failed} == {_word(twin)}, [(r["invariant"], r["diagnosis"]) for r in failed]


def test_batched_twin_is_a_layout_fault(tmp_path, monkeypatch, capsys):
    proc, report = _check(tmp_path, monkeypatch, capsys, ["multi_axis_bugs.py:qwen2_vl_bshd_row0"], "--layout", "bshd",
                          "--expect", "qwen2-vl-7b")
    assert proc.returncode == 1
    failed = [r for r in report["implementations"][0]["results"] if r["status"] in ("fail", "error")]
    assert [r["invariant"] for r in failed] == ["rope.layout"] and failed[0]["diagnosis"] == "layout"
    assert "batch row 0's positions" in failed[0]["message"]
