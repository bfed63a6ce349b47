"""decode.consistency at real lengths: the long decode every run has (prefill L - 1, then one step at a
time to 2L) reaches 2L, so a decoder wrong only there is caught; the shipped decoder holds; the property
says how far it has got while it runs."""

import json
from pathlib import Path

from ropespec.implementations import load_implementation
from ropespec.properties import framework
from ropespec.properties import test_decode as decode
from ropespec import engine, scheduler
from ropespec.spec.expectation import Expect

ROOT = Path(__file__).resolve().parents[1]

L = 256
EXPECT = {"head_dim": 64, "dtype": "float32", "max_position": 2 * L,
          "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": L}}


def _check(cli, target: str):
    return cli("check", target, "--invariant", "decode.consistency", "--expect", json.dumps(EXPECT), "--seed", "3",
               cwd=ROOT)


def test_the_long_decode_goes_from_L_minus_1_to_2L():
    impl = load_implementation("ropespec.implementations.numpy_decode:make", expect=Expect.from_dict(EXPECT), isolate=False)
    (case,) = decode._pinned(impl)
    assert (case["prefill"], case["prefill"] + case["steps"]) == (L - 1, 2 * L)


def test_a_decoder_wrong_only_at_length_2L_is_caught_there(cli):
    out = _check(cli, "tests/fixtures/decoders/clamped_length.py:make")
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"decode diverges from a fresh pass first at length {2 * L} " in out.stdout, out.stdout


def test_the_shipped_decoder_holds_at_the_same_expectation(cli):
    out = _check(cli, "ropespec.implementations.numpy_decode:make")
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_running_decode_says_which_length_it_has_reached(monkeypatch):
    monkeypatch.setattr(framework, "PROGRESS_EVERY", 0.0)
    said = []
    impl = load_implementation("ropespec.implementations.numpy_decode:make", expect=Expect.from_dict(EXPECT), isolate=False)
    engine.check_implementations([impl], [decode.test_consistency.property], profile="dev", seed=3,
                       on_progress=lambda *a: said.append(a))
    assert said and all(name == impl.name and inv == "decode.consistency" for name, inv, _, _ in said)
    texts = [t for _, _, t, _ in said]
    assert f"example 1, length {L} of {2 * L}" in texts and f"example 1, length {2 * L} of {2 * L}" in texts
    seconds = [s for *_, s in said]
    assert seconds == sorted(seconds)


def test_a_j_runner_passes_the_progress_on():
    """With -j the properties run in runner processes: their progress reaches the main process too."""
    from ropespec.inputs import load_requests
    from ropespec.request import CheckRequest

    requests = load_requests(["ropespec.implementations.numpy_decode:make"], expect=Expect.from_dict(EXPECT))
    said = []
    asked = CheckRequest(invariants=("decode.consistency",), profile="dev", seed=3)
    reports = scheduler.check_in_processes(requests, asked, jobs=1, on_progress=lambda *a: said.append(a))
    assert reports[0].results[0].status == "pass"
    assert any(inv == "decode.consistency" and "length" in text for _, inv, text, _ in said), said
