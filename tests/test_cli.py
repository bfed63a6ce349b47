"""`ropespec check`: exit codes, messages and the JSON report are as documented in README."""

import json
import shlex
import subprocess
import sys

import hypothesis
import pytest

from pathlib import Path

from ropespec.properties.framework import all_properties

from conftest import PROCESS_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]

N_PROPERTIES = len(all_properties())


@pytest.fixture
def good_file(toy_rope):
    return toy_rope / "toy_rope.py"


def test_plain_function_from_a_file(cli, good_file):
    expect = '{"head_dim": 64, "rope_theta": 500000}'
    code, out, _ = cli("check", f"{good_file}:llama", "--expect", expect, "--seed", "2")
    assert code == 0, out
    # the wrong base is caught, and only where it should be
    code, out, _ = cli("check", f"{good_file}:llama", "--expect", '{"head_dim": 64}', "--seed", "2")
    assert code == 1
    assert "rope.conformance" in out and "fail" in out


def test_zoo_member_fails_with_counterexample_and_replay(cli, tmp_path):
    report = tmp_path / "r.json"
    code, out, _ = cli("check", "ropespec.implementations.zoo.rope.off_by_one:make", "--seed", "5", "--json", str(report))
    assert code == 1
    data = json.loads(report.read_text())
    assert data["passed"] is False
    results = {r["invariant"]: r for r in data["implementations"][0]["results"]}
    for inv in ("rope.identity-at-zero", "rope.composition", "rope.conformance"):
        assert results[inv]["status"] == "fail"
        assert results[inv]["counterexample"]["expect"]["head_dim"] % 2 == 0
        assert results[inv]["replay"].startswith("ropespec check ropespec.implementations.zoo.rope.off_by_one:make")
    assert results["contract.deterministic"]["status"] == "pass"
    assert results["contract.deterministic"]["replay"] is None
    assert "replay: ropespec check" in out

    # the printed command replays exactly that failure
    argv = shlex.split(results["rope.composition"]["replay"])[2:]
    report2 = tmp_path / "r2.json"
    code2, _, _ = cli("check", *argv, "--json", str(report2))
    again = json.loads(report2.read_text())["implementations"][0]["results"]
    assert code2 == 1 and len(again) == 1
    assert again[0]["counterexample"] == results["rope.composition"]["counterexample"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--expect", '{"head_dim": 127}'], "ropespec: error: --expect: head_dim: must be even (dims rotate in pairs), got 127"),
        (["--expect", '{"rope_theta": 0.5}'], "--expect: rope_theta: must be a finite number > 1"),
        (["--expect", '{"head_dim": 64, "rotary_dim": 96}'], "--expect: rotary_dim: 96 exceeds head_dim 64"),
        (["--expect", '{"rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2}}'], "--expect: rope_scaling.rope_type: unknown"),
        (["--expect", '{"head_dim": 64, "heads": 8}'], "--expect: heads: unknown field"),
        (["--expect", "{oops"], "--expect: not valid JSON"),
        (["no/such/file.py:rope"], "TARGET no/such/file.py: no such file"),
        (["no_such_module_xyz:rope"], "TARGET no_such_module_xyz: no such module"),
        (["ropespec.implementations.numpy_rope:nothing"], "has no attribute 'nothing'"),
        (["ropespec.implementations.numpy_rope"], "expected path/to/file.py:name"),
        (["ropespec.implementations.numpy_rope:DTYPES"], "is a tuple, not callable"),
        (["--invariant", "rope.nope"], "--invariant: unknown rope.nope"),
        (["--invariant", "rope.conformanse"], "--invariant: unknown rope.conformanse; did you mean rope.conformance?"),
        (["--expect", "nonexistent.json"], "ropespec: error: --expect: nonexistent.json: no such file"),
        (["--expect", "llama3.1-8bb"], "--expect: 'llama3.1-8bb' is no preset; did you mean llama3.1-8b? (ropespec"),
        (["ropespec.implementations.numpy_rope:make", "--dtype", "bfloat16"], "numpy has no bfloat16; use --array torch"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(cli, args, message):
    code, out, err = cli("check", *args, "--seed", "0")
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out
    # one line a person reads: the field, what is wrong and the closest name, not every name known (an unknown
    # invariant listed all 77 in 1,672 characters; a mistyped preset, its suggestion after all 48)
    assert len(err) <= 300, (len(err), err)


def test_bad_signature_and_import_error(cli, tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("def three(a, b, c):\n    return a\n\nraise_later = 1\n")
    code, _, err = cli("check", f"{p}:three")
    assert code == 2 and "must take (x, positions) or (expect)" in err
    q = tmp_path / "broken.py"
    q.write_text("import numpy as np\n1 / 0\n")
    code, _, err = cli("check", f"{q}:f")
    assert code == 2 and "import failed: ZeroDivisionError" in err and "broken.py:2" in err


def test_factory_declining_everything_is_skipped_not_passed(cli, tmp_path):
    p = tmp_path / "picky.py"
    p.write_text("def make(expect):\n    raise NotImplementedError('only head_dim 4096')\n")
    report = tmp_path / "r.json"
    code, out, err = cli("check", f"{p}:make", "--json", str(report), "--seed", "0")
    assert code == 2 and not report.exists()  # nothing was checked: said before anything runs
    assert err.strip() == (f"ropespec: error: nothing can be checked on {p}:make: only head_dim 4096 "
                           "(--allow-skip accepts this)")
    code, out, _ = cli("check", f"{p}:make", "--json", str(report), "--seed", "0", "--allow-skip")
    data = json.loads(report.read_text())
    assert {r["status"] for r in data["implementations"][0]["results"]} == {"skip"}
    assert code == 0 and "only head_dim 4096" in out


def test_implementation_that_raises_is_reported_and_the_run_goes_on(cli, tmp_path):
    p = tmp_path / "raises.py"
    p.write_text(
        "import numpy as np\n"
        "def rope(x, positions):\n"
        "    if positions.max() > 1000:\n"
        "        raise IndexError('position out of table')\n"
        "    return x.copy()\n"
    )
    report = tmp_path / "r.json"
    code, out, _ = cli("check", f"{p}:rope", "--json", str(report), "--seed", "0")
    results = json.loads(report.read_text())["implementations"][0]["results"]
    assert code == 1
    assert len(results) == N_PROPERTIES  # every property still ran
    raised = [r for r in results if r["diagnosis"] == "exception"]
    assert raised and "IndexError: position out of table at raises.py:4" in raised[0]["message"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_transformers_style_torch_code_passes_the_default_class(cli, dtype):
    """examples/test_rope.py's my_rope is transformers' Llama recipe (float32 angles, cos/sin cast to x's dtype)."""
    pytest.importorskip("torch")
    code, out, _ = cli("check", f"{ROOT / 'examples' / 'test_rope.py'}:my_rope", "--array", "torch", "--dtype", dtype,
                       "--expect", '{"head_dim": 128, "rope_theta": 500000}', "--seed", "4")
    assert code == 0, out


def test_hanging_implementation_times_out_and_the_run_goes_on(cli, tmp_path):
    p = tmp_path / "hangs.py"
    p.write_text(
        "import time\n"
        "def rope(x, positions):\n"
        "    if len(positions) > 20:  # the sweep's calls (16 positions, 2 vectors each)\n"
        "        time.sleep(3600)\n"
        "    return x.copy()\n"
    )
    report = tmp_path / "r.json"
    # the sweep to large positions hangs; the properties after it still run, on a fresh worker, and report
    invariants = ["rope.conformance", "rope.norm-per-pair", "rope.identity-at-zero"]
    code, out, _ = cli("check", f"{p}:rope", *[a for i in invariants for a in ("--invariant", i)], "--timeout", "0.5",
                       "--json", str(report), "--seed", "0")
    results = json.loads(report.read_text())["implementations"][0]["results"]
    assert code == 1 and [r["invariant"] for r in results] == ["rope.conformance"] * 3 + invariants[1:]
    timed = [r for r in results if r["diagnosis"] == "timeout"]
    assert timed and "did not return within 0.5 s" in " ".join(r["message"] for r in timed)
    assert results[-1]["status"] == "pass"  # x.copy() is right at p = 0: checked, after the timeouts


@pytest.mark.parametrize("body, diagnosis, words", [
    ("    return x.tolist()\n", "shape", "expected numpy.ndarray"),
    # (a result of another shape at the warm-up too is exit 2: tests/test_warmup.py)
    ("    return x[:, :-1].copy() if len(positions) > 2 else x.copy()\n", "shape", "returned shape"),
    pytest.param("    import torch\n    return torch.tensor(x)\n", "shape", "expected numpy.ndarray",
                 marks=pytest.mark.skipif(__import__("importlib").util.find_spec("torch") is None, reason="torch")),
    ("    y = x.copy()\n    y[positions > 1000] = float('nan')\n    return y\n", "non-finite", "non-finite"),
    ("    x *= 1.0\n    x[:, 0] += 1.0\n    return x\n", "input-mutated", "wrote into its argument"),
])
def test_bad_outputs_get_their_diagnosis(cli, tmp_path, body, diagnosis, words):
    p = tmp_path / "bad_out.py"
    p.write_text("def rope(x, positions):\n" + body)
    report = tmp_path / "r.json"
    code, _, err = cli("check", f"{p}:rope", "--json", str(report), "--seed", "0")
    results = json.loads(report.read_text())["implementations"][0]["results"]
    assert code == 1 and "Traceback" not in err
    hits = [r for r in results if r["diagnosis"] == diagnosis]
    assert hits and any(words in r["message"] for r in hits), [(r["invariant"], r["diagnosis"]) for r in results]


def test_junit_report(cli, tmp_path):
    import xml.etree.ElementTree as ET

    out = tmp_path / "junit.xml"
    code, _, _ = cli("check", "ropespec.implementations.zoo.rope.backwards:make", "--junit", str(out), "--seed", "0",
                     "--invariant", "rope.conformance", "--invariant", "rope.norm-per-pair")
    suite = ET.parse(out).getroot().find("testsuite")
    assert code == 1 and suite.get("name") == "ropespec.implementations.zoo.rope.backwards:make"
    failures = suite.findall("testcase/failure")
    assert failures and int(suite.get("failures")) == len(failures)
    assert any("rope.conformance" in c.get("name") for c in suite.findall("testcase") if c.find("failure") is not None)


def test_cuda_device_is_a_clean_skip_without_a_gpu(cli):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: this test is about machines without one")
    code, _, err = cli("check", "ropespec.implementations.torch_rope:make", "--array", "torch", "--device", "cuda", "--seed",
                       "0")
    assert code == 2 and "CUDA is not available on this machine" in err  # nothing checked is not a pass
    code, out, _ = cli("check", "ropespec.implementations.torch_rope:make", "--array", "torch", "--device", "cuda", "--seed",
                       "0",
                       "--allow-skip")
    assert code == 0 and "CUDA is not available on this machine" in out and "0 passed, 0 failed" in out


def test_jobs_spread_implementations_over_processes(cli, tmp_path):
    report = tmp_path / "r.json"
    code, out, _ = cli("check", "ropespec.implementations.numpy_rope:make", "ropespec.implementations.zoo.rope.backwards:make",
                       "-j", "2", "--invariant", "rope.conformance", "--seed", "3", "--json", str(report))
    data = json.loads(report.read_text())
    assert code == 1
    assert [i["passed"] for i in data["implementations"]] == [True, False]


HF = '{"model_type": "llama", "hidden_size": 128, "num_attention_heads": 1, "max_position_embeddings": %s%s}'
DYN = ', "rope_scaling": {"rope_type": "dynamic", "factor": %s}'


@pytest.mark.parametrize("args, message", [
    (["--expect", '{"max_position": 18446744073709551616}'], "max_position: must be an integer in [2, 2^53"),
    (["--expect", '{"max_position": 1}'], "max_position: must be an integer in [2, 2^53"),
    (["--max-position", str(2**70)], "--max-position: must be an integer in [2, 2^53"),
    (["--max-position", "2**70"], "argument --max-position: invalid int value: '2**70'"),
    (["--expect", '{"head_dim": %d}' % 10**30], "head_dim: must be an even integer in [2, 4096], got 10000000000"),
    (["--expect", '{"head_dim": 1000000}'], "head_dim: must be an even integer in [2, 4096], got 1000000"),
    (["--expect", "[" * 50000 + "]" * 50000], "--expect: JSON nested too deeply"),
    (["--expect", '{"head_dim": 8, "head_dim": 16}'], "--expect: head_dim: appears twice in the JSON object"),
    (["--expect", HF % (4096, DYN % '"abc"')], "config.json: rope_scaling.factor: must be a number in [1, 65536], got 'abc'"),
    (["--expect", HF % (4096, DYN % "[2]")], "config.json: rope_scaling.factor: must be a number in [1, 65536], got [2]"),
    (["--expect", HF % (4096, DYN % "NaN")], "config.json: rope_scaling.factor: must be a number in [1, 65536], got nan"),
    (["--expect", HF % (4096, DYN % "1e308")], "config.json: rope_scaling.factor: must be a number in [1, 65536]"),
    (["--expect", HF % (2**70, "")], "config.json: max_position: must be an integer in [2, 2^53"),
    (["--expect", '{"rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": 1, "beta_slow": 32}}'],
     "rope_scaling.beta_fast: must exceed beta_slow (1 <= 32)"),
    (["--expect", '{"rope_scaling": {"rope_type": "linear", "factor": 0}}'], "rope_scaling.factor: must be a number in [1, 65536], got 0"),
    (["--expect", '{"rope_scaling": {"rope_type": "linear", "factor": -2}}'], "rope_scaling.factor: must be a number in [1, 65536], got -2"),
    (["--expect", '{"rope_scaling": {"rope_type": "linear", "factor": 1e300}}'], "rope_scaling.factor: must be a number in [1, 65536], got 1e+300"),
    (["--expect", '{"head_dim": 4, "rope_scaling": {"rope_type": "longrope", "short_factor": [1, -1], "long_factor": [1, 2]}}'],
     "rope_scaling.short_factor: must be a list of rotary_dim/2 numbers in (0, 65536]"),
    (["--expect", '{"rope_scaling": {"rope_type": "yarn", "factor": 4, "mscale": -1}}'], "rope_scaling.mscale: must be a finite number >= 0, got -1"),
    (["--expect", '{"rope_scaling": {"rope_type": "yarn", "factor": 4, "attention_factor": -0.5}}'],
     "rope_scaling.attention_factor: must be a finite number > 0, got -0.5"),
    (["--timeout", "nan"], "--timeout: must be 0 (no limit) or a number of seconds in (0, 86400], got nan"),
    (["--timeout", "inf"], "--timeout: must be 0 (no limit) or a number of seconds in (0, 86400], got inf"),
    (["--timeout", "1e300"], "--timeout: must be 0 (no limit) or a number of seconds in (0, 86400], got 1e+300"),
    (["--warmup-timeout", "-1"], "--warmup-timeout: must be 0 (no limit) or a number of seconds"),
    (["--device", "bogus"], "--device: must be cpu, cuda or cuda:N, got 'bogus'"),
    (["--replay", "6.155.2:not-a-blob!"], "--replay: expected VERSION:BLOB as printed by a failing run"),
    (["--replay", f"{hypothesis.__version__}:AgAA"], "--replay: 'AgAA' is not a blob printed by a failing run"),
    (["--replay", "6.1:AXicc2R0ZIBDJkdkHiOMBwBXcASZ"], "--replay: printed with Hypothesis 6.1; this is Hypothesis"),
    (["--json", "/"], "--json: / is a folder; give a file path"),
    (["--junit", "/no/such/folder/r.xml"], "--junit: the folder /no/such/folder does not exist"),
    (["--module", "numpy"], "--module numpy: expected a path to the lab's .py file"),
])
def test_bad_input_is_one_line_and_exit_2(cli, args, message):
    target = [] if "--module" in args else ["ropespec.implementations.numpy_rope:make"]
    code, out, err = cli("check", *target, *args, "--seed", "0")  # argparse's errors too (ropespec.cli._Parser)
    assert code == 2, out[-500:]
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content, message", [
    (b"\x00\x01\xff\xfe", "not UTF-8 text (a binary file?)"),
    (b'{"head_dim": "\xe9"}', "not UTF-8 text (a binary file?)"),
    (b"[" * 200000 + b"]" * 200000, "nested too deeply"),
])
def test_bad_expectation_files(cli, tmp_path, content, message):
    p = tmp_path / "e.json"
    p.write_bytes(content)
    code, _, err = cli("check", "ropespec.implementations.numpy_rope:make", "--expect", str(p))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_unreadable_expectation_file(cli, tmp_path, monkeypatch):
    p = tmp_path / "e.json"
    p.write_text("{}")

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)  # root can read any file: say no the way the OS would
    code, _, err = cli("check", "ropespec.implementations.numpy_rope:make", "--expect", str(p))
    assert code == 2 and "cannot be read (Permission denied)" in err


def test_lab_module_that_fails_exits_1(cli):
    code, out, _ = cli("check", "--module", str(ROOT / "implementations" / "zoo" / "lab" / "fixed_base.py"))
    assert code == 1 and "failed" in out


def test_parallel_runners_take_an_expectation_with_scaling(cli):
    """-j hands each runner its expectation: one with a rope_scaling dict crossed the process boundary as a
    mappingproxy, which does not pickle (a traceback, no report) until Expect learned to pickle itself."""
    code, out, err = cli("check", "ropespec.implementations.numpy_rope:make", "implementations/numpy_rope.py:make", "-j", "2",
                         "--expect", "llama3.1-8b", "--invariant", "rope.identity-at-zero", "--seed", "1")
    assert code == 0 and "Traceback" not in err, out + err
    assert "2 passed, 0 failed" in out


def test_a_target_named_by_its_folder_is_read_by_its_installed_name(cli, tmp_path, monkeypatch):
    """The repository's folders install under ropespec: implementations.numpy_rope:make is
    ropespec.implementations.numpy_rope:make, and the run says so; a user's own package named implementations keeps
    its name."""
    import importlib
    import sys

    monkeypatch.chdir(tmp_path)
    # as installed: the repository's folder is not on the path (pytest puts the root there for its conftest.py)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != ROOT])
    importlib.invalidate_caches()
    code, out, err = cli("check", "implementations.numpy_rope:make", "--invariant", "rope.conformance",
                         "--profile", "ci", "--seed", "1")
    assert code == 0
    assert "TARGET implementations.numpy_rope:make is ropespec.implementations.numpy_rope:make" in out + err
    assert "ropespec.implementations.numpy_rope:make  rope.conformance" in out
    (tmp_path / "implementations").mkdir()
    (tmp_path / "implementations" / "__init__.py").write_text("")
    (tmp_path / "implementations" / "mine.py").write_text(
        "import numpy as np\n\ndef make(expect):\n    raise NotImplementedError('not this one')\n")
    # syspath_prepend would save this patched path and write it back into the restored list at teardown, leaving the
    # repository off the path for every later test of the process
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    importlib.invalidate_caches()
    from ropespec.implementations.boundary.targets import installed_target

    assert installed_target("implementations.mine:make") == "implementations.mine:make"
    assert installed_target("implementations/numpy_rope.py:make") == "implementations/numpy_rope.py:make"


def test_exitfirst_and_maxfail_stop_at_failing_implementations(cli, tmp_path):
    """-x stops at the first failing implementation, --maxfail N at the Nth, as pytest's do: the report and its JSON
    hold the implementations that finished and say the run stopped and how many were not checked (exit 1); a limit
    reached by the last implementation stops nothing; --maxfail 0 is one line, exit 2."""
    import json

    zoo = "ropespec.implementations.zoo.rope"
    targets = ["ropespec.implementations.numpy_rope:make", f"{zoo}.off_by_one:make", f"{zoo}.wrong_base:make",
               "ropespec.implementations.numpy_rope:make"]
    report = tmp_path / "r.json"
    code, out, err = cli("check", *targets, "-x", "--seed", "1", "--invariant", "rope.conformance", "--json", report)
    assert code == 1 and "stopped after 1 failing implementation (-x, --maxfail 1): 2 of 4 implementations not " \
        "checked" in err, err
    assert out.rstrip().splitlines()[-1].endswith("; stopped after 1 failing implementation (-x, --maxfail 1): 2 of "
                                                  "4 implementations not checked"), out[-300:]
    d = json.loads(report.read_text())
    assert d["stopped"].startswith("stopped after 1") and not d["passed"]
    assert [i["name"] for i in d["implementations"]] == targets[:2]
    code, out, err = cli("check", *targets[:3], "--maxfail", "2", "--seed", "1", "--invariant", "rope.conformance")
    assert code == 1 and "stopped" not in err and "(3 of 3 done)" in err, err
    code, out, err = cli("check", targets[0], "--maxfail", "0")
    assert code == 2 and err.strip() == "ropespec: error: --maxfail: must be >= 1, got 0", err


def test_with_2_and_1_the_report_comes_first_and_says_its_counts(tmp_path):
    """stdout and stderr into one file (2>&1): an implementation's counts on stderr landed above the report they
    summarise; the report says them there, and stderr says them only where it is read apart from the report."""
    toy = tmp_path / "toy.py"
    toy.write_text("import numpy as np\n\ndef apply(x, positions):\n    return np.asarray(x) * 1.5\n")
    args = [sys.executable, "-m", "ropespec", "check", f"{toy}:apply", "--invariant", "rope.conformance", "--seed", "0"]
    log = tmp_path / "log.txt"
    with open(log, "w") as fh:
        code = subprocess.run(args, stdout=fh, stderr=subprocess.STDOUT, timeout=PROCESS_TIMEOUT).returncode
    lines = log.read_text().splitlines()
    assert code == 1 and lines[0].startswith("ropespec check: profile dev"), lines[:3]
    assert not any(line.startswith(f"ropespec: {toy}:apply: ") for line in lines), lines
    apart = subprocess.run(args, capture_output=True, text=True, timeout=PROCESS_TIMEOUT)
    assert f"ropespec: {toy}:apply: 0 passed, 3 failed" in apart.stderr, apart.stderr


def test_a_function_of_neither_form_is_one_line_and_exit_2(cli, tmp_path):
    """f(x) was taken for a factory and failed 14 properties '[shape]' with exit 1, where f(x, p, q) was one line and
    exit 2: a callable that is neither form the contract takes (a plain function of (x, positions), a factory of
    (expect) returning one) is bad usage, said once, whichever way its signature misleads."""
    (tmp_path / "one.py").write_text("def f(x):\n    return x\n\n\ndef g(x, p, q):\n    return x\n")
    for name, said in (("f", "it has one required argument, so it was called as a factory, make(expect), and "
                              "returned Expect, not a function"), ("g", "must take (x, positions) or (expect)")):
        code, out, err = cli("check", f"{tmp_path / 'one.py'}:{name}")
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and said in lines[0] and not out.strip(), (name, code, out, err)
