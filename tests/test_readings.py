"""`ropespec readings`: each word is given where a library's RoPE reads a config that way and no other word fits, a
correct reading agrees, a door off by ten times the float32 bound fits no reading, and bad input is one line (exit
2). The doors here are the reference itself under each other reading of the file (ropespec.reference.fast, rounded to
float32): a library that reads a field otherwise computes exactly that. The real libraries run in the slow tier
(tests/test_libraries.py)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np
import pytest

from ropespec.implementations import libraries
from ropespec.implementations.libraries import Library
from ropespec.properties import readings as measured
from ropespec.reference import fast, rope as reference
from ropespec.spec import hfconfig
from ropespec.spec.expectation import ExpectationError
from ropespec.spec.readings import WORDS, readings

FIXTURES = Path(__file__).parent / "fixtures" / "readings"


def config(name: str):
    return hfconfig.read(FIXTURES / f"{name}.json")


def door(e):
    """A RoPE that computes ``e`` exactly, rounded to float32, as a library's door calls it."""
    return lambda x, positions: fast.apply(e, x, positions).astype(np.float32)


def other(e, word: str, what: str = "", default=None):
    return next((r.expect for r in readings(e) if r.word == word and what in r.what), default)


def test_every_reading_of_a_config_is_a_registered_word():
    for path in sorted(FIXTURES.glob("*.json")):
        for r in readings(hfconfig.read(path)):
            assert r.word in WORDS, (path.name, r)


@pytest.mark.parametrize("name, word, what", [
    ("gpt-oss-20b", "truncate", "rounded"),
    ("qwen3-8b-yarn", "attention-factor", "default formula"),
    ("llama-yarn-mscale-all-dim", "attention-factor", "none applied"),
    ("qwen2.5-7b-yarn-no-original", "original-length", "4096"),
    ("phi-3.5-mini", "longrope-switch", "long factors"),
    ("phi-3.5-mini", "longrope-switch", "short factors"),
    ("llama-dynamic-ntk", "dynamic-base", "every length"),
    ("llama-3.1-8b-saved-by-transformers-5", "ignored-config", "base 10000"),
    ("llama-dynamic-ntk", "ignored-config", "dropped"),
])
def test_a_door_that_reads_one_field_otherwise_gets_that_word_and_no_other(name, word, what):
    e = config(name)
    m = measured.measure(door(other(e, word, what)), e)
    assert not m.agrees
    assert m.words == [word] and m.word == word, m
    assert m.pairs_off > 0


@pytest.mark.parametrize("name", ["gpt-oss-20b", "qwen3-8b-yarn", "phi-3.5-mini", "llama-dynamic-ntk", "phi-2",
                                  "gemma-3-4b-text", "llama-3.1-8b"])
def test_the_reference_reading_agrees(name):
    e = config(name)
    m = measured.measure(door(e), e)
    assert m.agrees and m.word is None and m.pairs_off == 0, m
    assert abs(m.magnitude - m.expected_magnitude) < 1e-6
    assert m.freq_error < 1e-5
    assert 0 <= m.output_error <= m.output_bound, m  # the figure a cell says, and the bound to read it against


def test_a_reading_written_elsewhere_but_turned_alike_agrees():
    """DeepSeek-V3's rope_interleave turns the interleaved pairs and writes them in halves; written in place it is the
    same reading (the scores do not see where q and k write their pairs)."""
    e = hfconfig.read(Path(__file__).parent / "fixtures" / "configs" / "deepseek-v3.json")
    assert e.convention == "rope_interleave"
    m = measured.measure(door(e.replace(convention="interleaved")), e)
    assert m.agrees, m


def test_a_door_a_few_times_over_the_float32_bound_fits_no_reading():
    """Every angle off by a relative 50 u (float32's u): its largest error on each probe is 3.7 to 7.2 times the bound
    there (measured; the bound gives each pair's angle its rounding, the ladder's and the formation's), and it is
    far from every other reading."""
    e = config("llama-3.1-8b")
    exact = door(e)

    def off(x, positions):
        y = exact(x, positions).astype(np.float64)
        # turn every pair a little further: by 50 u of its own angle
        phi = positions[:, None] * reference.thetas(e, seq_len=int(positions.max()) + 1)[None, :] * 50 * 2.0**-24
        a, b = (np.array(ix) for ix in zip(*e.pairs()))
        ya, yb = y[:, a].copy(), y[:, b].copy()
        y[:, a], y[:, b] = ya * np.cos(phi) - yb * np.sin(phi), ya * np.sin(phi) + yb * np.cos(phi)
        return y.astype(np.float32)

    m = measured.measure(off, e)
    assert not m.agrees and m.words == [] and m.word is None, m


def test_dynamic_with_a_served_length_is_the_table_of_that_length_at_every_length():
    e = config("llama-dynamic-ntk")
    fixed = e.replace(rope_scaling=dict(e.rope_scaling, max_model_len=e.max_position))
    assert np.array_equal(reference.thetas(fixed, seq_len=10), reference.thetas(e, seq_len=e.max_position))
    assert not np.array_equal(reference.thetas(e, seq_len=10), reference.thetas(e, seq_len=e.max_position))
    with pytest.raises(ExpectationError, match="max_model_len"):
        e.replace(rope_scaling=dict(e.rope_scaling, max_model_len=0))


class _Reads(Library):
    """A library whose reading is the reference's under the other reading ``change`` (word, what) names, the
    reference itself where None or where the config has no such reading; ``then`` "crash" or "hang" misbehaves
    instead. Its instances travel to the library's process pickled (their class imports from this module)."""

    distribution = "ropespec"
    module = "ropespec"

    def __init__(self, name, change=None, then=None):
        self.name, self.change, self.then = name, change, then

    def rope(self, folder):
        if self.then == "crash":
            os._exit(3)
        if self.then == "hang":
            time.sleep(600)
        e = hfconfig.read(Path(folder) / "config.json")
        return door(other(e, *self.change, default=e) if self.change else e)


@pytest.fixture
def fake(monkeypatch):
    def register(name, change=None, then=None):
        lib = _Reads(name, change, then)
        monkeypatch.setitem(libraries.REGISTRY, name, lib)
        return lib

    return register


def test_the_command_names_the_field_and_writes_the_table(cli, fake, tmp_path):
    fake("rounds", ("truncate", "rounded"))
    fake("right")
    out, report = tmp_path / "table.md", tmp_path / "r.json"
    code, text, err = cli("readings", FIXTURES / "gpt-oss-20b.json", FIXTURES / "llama-3.1-8b.json", "--library",
                          "rounds,right", "--out", out, "--json", report)
    assert code == 1, text + err
    assert "gpt-oss-20b · rounds" in text and "[truncate]" in text and "9 of 32 pairs off" in text
    assert "llama-3.1-8b · rounds" in text and "agrees" in text.split("llama-3.1-8b · rounds")[1].splitlines()[0]
    rows = json.loads(report.read_text())["rows"]
    assert [(r["config"], r["library"], r["status"], r.get("word")) for r in rows] == [
        ("gpt-oss-20b", "rounds", "differs", "truncate"), ("gpt-oss-20b", "right", "agrees", None),
        ("llama-3.1-8b", "rounds", "agrees", None), ("llama-3.1-8b", "right", "agrees", None)]
    table = out.read_text()
    assert "| gpt-oss-20b | rounds" in table and "**differs** | truncate |" in table
    code, text, err = cli("readings", FIXTURES / "gpt-oss-20b.json", "--library", "right")
    assert code == 0, text + err


def test_a_library_that_crashes_or_hangs_is_said_in_its_cell_and_the_next_config_is_read(cli, fake, monkeypatch):
    from ropespec.commands import readings as command

    monkeypatch.setattr(command, "CELL_TIMEOUT", 5)
    fake("crashes", then="crash")
    fake("hangs", then="hang")
    fake("right")
    started = time.monotonic()
    code, text, err = cli("readings", FIXTURES / "gpt-oss-20b.json", FIXTURES / "llama-3.1-8b.json", "--library",
                          "crashes,hangs,right")
    assert code == 0, text + err  # nothing read otherwise: the right library agrees on both, the others read nothing
    assert text.count("crashes's process ended while reading this config") == 2
    assert text.count("hangs gave no answer within 5 s") == 2
    assert text.count("· right 0.1.0: agrees") == 2
    assert time.monotonic() - started < 60
    assert not multiprocessing.active_children()  # the libraries' processes, the stopped ones too, are gone


@pytest.mark.parametrize("args, said", [
    (["nothing/*.json"], "CONFIG: 'nothing/*.json' matches no file"),
    (["missing.json"], "CONFIG: missing.json: no such file"),
    ([str(FIXTURES / "gpt-oss-20b.json"), "--library", "vllm-ish"], "--library: unknown 'vllm-ish'"),
])
def test_bad_input_is_one_line(cli, args, said, tmp_path):
    code, text, err = cli("readings", *args, cwd=tmp_path)
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err


def test_a_library_named_that_is_not_installed_is_refused_in_one_line(cli, monkeypatch):
    lib = libraries.get("mlx-lm")
    monkeypatch.setattr(type(lib), "version", lambda self: None)
    code, text, err = cli("readings", FIXTURES / "gpt-oss-20b.json", "--library", "mlx-lm")
    assert code == 2, text + err
    assert err.strip() == "ropespec: error: --library: mlx-lm is not installed (pip install -e '.[mlx]')"


def test_a_config_that_is_no_config_is_one_line(cli, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
                               "rope_scaling": {"rope_type": "yarn"}}))
    code, text, err = cli("readings", bad, "--library", "transformers")
    assert code == 2 and "rope_scaling.factor" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("given", ["file", "folder", "glob"])
def test_the_table_never_overwrites_a_config(cli, tmp_path, given):
    """Whether the config is named by its file, its model folder or a glob, --out or --json on it is refused before
    anything runs, and the file is left as it was."""
    folder = tmp_path / "mymodel"
    folder.mkdir()
    config = folder / "config.json"
    config.write_text((FIXTURES / "llama-3.1-8b.json").read_text())
    before = config.read_text()
    named = {"file": config, "folder": folder, "glob": tmp_path / "*" / "config.json"}[given]
    for option in ("--out", "--json"):
        code, text, err = cli("readings", named, option, config, "--library", "transformers")
        assert code == 2 and option in err and len(err.strip().splitlines()) == 1, err
        assert config.read_text() == before


def test_a_library_is_named_by_its_name_its_distribution_or_its_extra(monkeypatch):
    """`--library mlx` (the extra pip install -e '.[mlx]' installs it by) was refused; readings' help lists each library
    with its extra."""
    from ropespec.commands import readings as command
    from ropespec.request import ReadingsRequest

    for given in ("mlx-lm", "mlx", "MLX", "mlx-lm,mlx"):
        monkeypatch.setattr(type(libraries.get("mlx-lm")), "missing", lambda self: None)
        run, said = command.chosen(given)
        assert [lib.name for lib in run] == ["mlx-lm"] and not said, given
    assert libraries.find("llamacpp") is libraries.find("llama-cpp-python") is libraries.get("llama.cpp")
    assert libraries.find("vllm-ish") is None
    said = next(f for f in dataclasses.fields(ReadingsRequest) if f.name == "library").metadata["flag"].kwargs["help"]
    assert all(f"{lib.name} ({lib.extra} extra)" in said for lib in libraries.REGISTRY.values()), said


def test_a_cell_s_figures_say_the_bound_they_are_read_against():
    """'agrees ... logits off by 0.023' gave no bound to read it against: each cell's error is said with its bound."""
    from ropespec.commands.readings import _figures

    model = {"door": "model", "carrier": "LlamaForCausalLM", "output_error": 0.0021, "output_bound": 0.0045,
             "probes": [131056], "largest": 131071}
    assert "logits off by 0.0021 (bound 0.0045) at positions 131056" in _figures(model)
    rope = {"door": "rope", "pairs_off": 0, "n_pairs": 64, "freq_error": 1e-8, "magnitude": 1.0,
            "expected_magnitude": 1.0, "output_error": 3e-7, "output_bound": 2e-6, "largest": 131071}
    assert "output off by 3e-07 (bound 2e-06) at p = 131071" in _figures(rope)
