"""decode.consistency at real lengths: the long decode every run has (prefill L - 1, then one step at a
time to 2L) reaches 2L, so a decoder wrong only there is caught; the shipped decoder holds; the property
says how far it has got while it runs."""

import json

import numpy as np
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


def _member(name):
    from ropespec.implementations.zoo import members

    return next(m for m in members() if m.name == name)


def test_a_decoder_is_named_by_the_position_its_steps_used(checked):
    """A decoder is called as a generate loop calls it: its prefill at positions 0, 1, ..., n - 1, then steps. mlx-vlm
    #1983's decoder turns each step at 0 and fla #766's one late; the word comes from the step's own measured
    position, never from a probe at positions a prefill never gets (which read the first as no rotation and the
    second as a layout)."""
    for name, said in (("decode_step_at_zero", "at position 0 where"), ("decode_step_one_late", "one position late")):
        _, r = checked.zoo(_member(name), decode.test_consistency.property)
        assert (r.status, r.diagnosis) == ("fail", "position-offset"), (name, r.message)
        assert said in r.message and "follows from" not in r.message, (name, r.message)


def test_a_decoder_s_reading_as_a_rope_prefills_from_position_0():
    """Every call a decoder gets from the diagnoses, the fingerprint and the precision sweep is a prompt from position
    0: a probe at [3, 0, 7, 3] is answered by prefills of 0..7 (twice: position 3 repeats), each row read at its own
    position, and equals the exact rotation there."""
    from ropespec.properties.numerics import exact

    seen = []

    class Recording:
        def __init__(self, e):
            from ropespec.implementations.numpy_decode import Decoder

            self.inner = Decoder(e)

        def prefill(self, x, positions):
            seen.append(list(positions))
            return self.inner.prefill(x, positions)

        def step(self, x, position):
            return self.inner.step(x, position)

    e = Expect(head_dim=8, max_position=64, dtype="float64")
    impl = load_implementation(Recording, expect=e, isolate=False)
    f = impl.as_rope(e)
    x = np.random.default_rng(0).standard_normal((4, 8))
    pos = np.array([3, 0, 7, 3])
    y = f(x, pos)
    assert seen == [list(range(8)), list(range(4))]
    np.testing.assert_allclose(y, exact(e, x, pos)[0], atol=1e-12)
