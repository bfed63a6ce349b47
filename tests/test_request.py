"""One typed request per command (ropespec/request.py): built from the command line, the Python API's keywords and
the pytest plugin's options; printable as the command that makes it again and as JSON, which replays, --resume and the
configuration matrix read back."""

from __future__ import annotations

import json
import pickle
import shlex

import pytest

from ropespec.cli import main, parser
from ropespec.inputs import UsageError
from ropespec.request import CheckRequest, FingerprintRequest, REQUESTS, parsed


def _made_again(req):
    """The request its own command line makes."""
    return parsed(parser(), shlex.split(req.command_line())[1:])


@pytest.mark.parametrize("argv", [
    ["check"],
    ["check", "a.py:f", "b.py:g", "--expect", "llama3.1-8b", "--expect", '{"head_dim": 64}', "--dtype",
     "float32,bfloat16", "--layout", "nd,bshd", "--array", "torch", "--family", "rope", "--form", "kernel", "--table",
     "t.py:table", "--inplace", "--max-position", "4096", "--profile", "ci", "--seed", "7", "--invariant",
     "rope.conformance", "--invariant", "rope.locality", "-j", "2", "--force-jobs", "--timeout", "2.5",
     "--warmup-timeout", "0", "--memory-limit", "1GB", "-x", "--allow-skip", "--json", "r.json", "--junit", "r.xml"],
    ["precision", "f.py:g", "--expect", "llama3.1-8b", "--max-position", "65536", "--sweep-to", "1048576", "--exhaustive",
     "--chunk", "1000", "--plot", "p.png"],
    ["fingerprint", "f.py:g", "--family", "alibi", "--json", "-"],
    ["golden", "--expect", "llama2-7b", "--positions", "1,999", "--out", "g.json"],
    ["spec", "--format", "html", "--impl", "f.py:g", "--seed", "3"],
    ["proofs", "rope.conformance", "--no-mutants"],
    ["lab", "lab.py", "--seed", "2"],
    ["presets"],
])
def test_a_request_round_trips_through_its_command_line_and_its_json(argv):
    """Every command's request is printed as the command that makes it again, and as JSON that makes it again."""
    req = parsed(parser(), argv)
    assert type(req) is REQUESTS[argv[0]]
    assert _made_again(req) == req, req.command_line()
    assert type(req).from_json(json.loads(json.dumps(req.to_json()))) == req
    assert pickle.loads(pickle.dumps(req)) == req  # as the -j runners and the cluster ship what it asks


def test_the_api_and_the_command_line_build_the_same_request():
    """api.check's keywords are the request's fields: the same check asked both ways is one request; another keyword is
    a TypeError, as a Python call gives, and what the request itself finds wrong is one line."""
    cli = parsed(parser(), ["check", "f.py:g", "--expect", "llama3.1-8b", "--array", "torch", "--dtype", "bfloat16",
                            "--invariant", "rope.conformance", "--seed", "3", "--profile", "ci"])
    api = CheckRequest.from_keywords("f.py:g", "llama3.1-8b", array="torch", dtype="bfloat16",
                                     invariants=["rope.conformance"], seed=3, profile="ci")
    assert api == cli
    with pytest.raises(TypeError, match="unexpected keyword argument 'jobs'"):
        CheckRequest.from_keywords("f.py:g", jobs=2)  # a command line's run, not the API's
    with pytest.raises(TypeError, match="'hed_dim'"):
        FingerprintRequest.from_keywords("f.py:g", hed_dim=2)
    with pytest.raises(UsageError, match="^-j: must be >= 1, got 0$"):
        parsed(parser(), ["check", "-j", "0"])


def test_the_pytest_plugin_builds_the_same_request():
    """The plugin's --rope-* options are fields of the same request, read by its one builder."""

    class Config:
        given = {"rope_impl": ["f.py:g"], "rope_expect": ["llama3.1-8b"], "rope_dtype": "float32,bfloat16",
                 "rope_layout": "bshd", "rope_max_position": 4096, "rope_inplace": False}

        def getoption(self, name, default=None):
            return self.given.get(name, default)

    req = CheckRequest.from_pytest(Config())
    assert req == CheckRequest(targets=("f.py:g",), expect=("llama3.1-8b",), dtype="float32,bfloat16", layout="bshd",
                               max_position=4096)
    assert [c.says() for c in req.configurations()] == [
        {"expect": "llama3.1-8b", "dtype": d, "layout": "bshd"} for d in ("float32", "bfloat16")]


def test_a_replay_is_the_request_of_its_one_case(capsys):
    """A failure's replay command, parsed, is the request of exactly that case (its TARGET, dtype, expectation,
    property, profile and seed: ropespec.replay.replay_request), and running it fails again with the same word."""
    from ropespec import check
    from ropespec.replay import replay_command, replay_request

    target = "ropespec.implementations.zoo.rope.off_by_one:make"
    for expect in (None, {"head_dim": 64}):
        result = check(target, expect, invariants=["rope.identity-at-zero"], seed=1)
        [rep] = result.reports
        [failed] = [r for r in rep.results if r.status == "fail"]
        command = replay_command(rep.impl, failed)
        req = parsed(parser(), shlex.split(command)[1:])
        assert req == replay_request(rep.impl, failed), command
        assert (req.targets, req.invariants, req.seed, req.profile) == ((target,), ("rope.identity-at-zero",), 1, "dev")
        assert main(shlex.split(command)[1:]) == 1
        assert f"fail [{failed.diagnosis}]" in capsys.readouterr().out


def test_a_report_states_its_request_and_resume_reads_it_back(tmp_path, capsys):
    """The --json report's header is the run's request (its seed the run's); --resume rebuilds it and resumes only a
    run that checks the same things, else says the command that wrote the report."""
    report = tmp_path / "r.json"
    argv = ["check", "ropespec.implementations.numpy_rope:make", "--expect", "llama2-7b", "--invariant",
            "rope.norm-per-pair", "--profile", "ci", "--seed", "4"]
    assert main([*argv, "--json", str(report)]) == 0
    capsys.readouterr()
    stated = CheckRequest.from_json(json.loads(report.read_text())["request"])
    assert stated == parsed(parser(), [*argv, "--json", str(report)])
    code = main([*argv[:-2], "--resume", str(report)])
    assert code == 0 and "1 of 1 implementations held there" in capsys.readouterr().out
    code = main(["check", "ropespec.implementations.numpy_rope:make", "--expect", "llama3.1-8b", "--invariant",
                 "rope.norm-per-pair", "--profile", "ci", "--resume", str(report)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "checks other expect: resume with its command, ropespec check " \
        "ropespec.implementations.numpy_rope:make --expect llama2-7b" in err, err


def test_an_option_is_one_field():
    """A new option is one field of its request: the parser, the builders, the Python API's keywords, the printed
    command and the generated reference pages all read it from there."""
    import argparse
    from dataclasses import dataclass

    from ropespec import request

    @dataclass(frozen=True)
    class Wider(request.CheckRequest):
        batch: int = request.option(1, "--batch", type=int, metavar="B", help="rows per call (default: 1)")

    p = Wider.add_arguments(argparse.ArgumentParser())
    req = Wider.from_namespace(p.parse_args(["f.py:g", "--batch", "4"]))
    assert req.batch == 4 and "--batch 4" in req.command_line()
    assert Wider.from_keywords("f.py:g", batch=4, profile="dev") == req
    assert request.api_keywords(Wider)["batch"] == "rows per call (default: 1)"
    assert ("batch", ("--batch",), "B", "1", "rows per call (default: 1)") in request.options_of(Wider)
    assert Wider.from_json(req.to_json()) == req
