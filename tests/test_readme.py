"""Every command the documentation shows (README and the site's pages under docs/: tests/docs_text.py) is run, in a
scratch directory with the files its examples save (README's my_rope.py, ...), and ends with the exit code the
documentation gives it (a trailing '# ... exit N', else 0). The few that cannot run inside the test suite say why
here."""

import json
import os
import inspect
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import docs_text

ROOT = Path(__file__).resolve().parents[1]
README = docs_text.TEXT  # README and the site's hand-written pages

#: commands run elsewhere, and why
NOT_HERE = {
    "pip install": "installation: .ci/run runs exactly these lines on a clean machine",
    "pytest": "the test suite itself: .ci/run runs it",
    "pytest -m slow": "the slow tier of the test suite itself: .ci/run runs it",
    "mkdocs build": "the documentation site: tests/test_docs.py builds it (warnings as errors) and reads it in Chromium",
    "ropespec check ropespec.implementations.adapters.hf_axes:qwen3_vl --array torch --dtype bfloat16 --expect qwen3-vl-8b":
        "tests/test_real_multi_axis.py checks this adapter under this preset and dtype in the suite's own workers, "
        "where one import of transformers serves every adapter (a process of its own would import it again)",
    "ropespec check ropespec.implementations.adapters.diffusers:flux --array torch --expect flux.1-dev":
        "tests/test_real_multi_axis.py checks this adapter under this preset and dtype in the suite's own workers, "
        "where one import of diffusers serves both of its models",
    "ropespec check ropespec.implementations.adapters.hf_positions:qwen2_vl": "tests/test_real_multi_axis.py checks the "
        "same four builders with the same profile and seed in the suite's own workers, where one import of "
        "transformers serves them all (a process of its own would import it again)",
    "ropespec check ropespec.implementations.adapters.hf_model:phi3 --family model --dtype float64 --expect "
    "tests/fixtures/configs/phi-3-mini-128k.json": "tests/test_model.py checks transformers' Phi-3 under this config.json "
                                                   "(and Qwen2-VL's, below), with the same options",
    "ropespec check tests/fixtures/configs/gemma-3-4b.json --family model": "tests/test_model.py builds this config's "
        "tiny model and checks another config.json whole from a scratch folder",
    "ropespec check ropespec.implementations.adapters.hf_model:qwen2_vl --family model --dtype float64 --expect "
    "qwen2-vl-7b": "tests/test_model.py checks transformers' Qwen2-VL under this preset, with the same options",
    "pytest properties --rope-profile thorough": "the thorough profile takes about 4 minutes (README, Timings): "
                                                 "beyond the suite's budget; run by hand",
    "ropespec check kernels.py:make": "a reader's own kernel file, model tree and cluster: tests/test_matrix.py "
                                      "(--resume) and tests/test_cluster.py (--cluster) run these options on targets "
                                      "of their own",
    "ropespec check ropespec.implementations.numpy_rope:make --expect llama3.1-8b --expect mistral-7b-v0.1 --cluster local":
        "tests/test_cluster.py starts a local cluster for a matrix of its own (the same options and more); a second "
        "cluster here would pay for Ray's start again",
    "ropespec readings": "a reader's own model tree and the libraries installed: tests/test_libraries.py (slow tier) runs "
                         "`ropespec readings` on the fixture configs from a scratch folder for each library installed, "
                         "and tests/test_readings.py its table, options and refusals",
    "pytest properties --rope-impl kernels.py:make": "a reader's own kernel file and model tree: "
                                                     "tests/test_examples.py::test_properties_under_xdist runs the "
                                                     "plugin's matrix under pytest-xdist on ropespec's own factory",
}


def readme_commands() -> list[tuple[str, int]]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        # a command continued with a trailing backslash (as a page cuts one to fit its code box) is one command
        for line in re.sub(r"[ \t]*\\\n[ \t]*", " ", block).splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            command, _, comment = line.partition("  #")
            m = re.search(r"\bexit (\d+)\b", comment)
            out.append((command.strip(), int(m[1]) if m else 0))
    # commands quoted inline: `ropespec check ...`
    for command in re.findall(r"`(ropespec (?:check|precision|fingerprint|golden|spec|proofs)[^`]*)`", README):
        placeholders = [w for w in command.split() if re.fullmatch(r"[A-Z]+", w)]  # --seed S, -j N, TARGET
        if not placeholders and "..." not in command and len(command.split()) > 2:
            out.append((command, 0))
    return list(dict.fromkeys(out))


def _why_not(command: str) -> str | None:
    for prefix, why in NOT_HERE.items():
        if command == prefix or (command.startswith(prefix + " ") and prefix != "pytest"):
            return why
    return None


COMMANDS = readme_commands()

SHIPPED = ["stdlib-float64", "numpy-float64", "numpy-float32", "torch-float64", "torch-float32", "torch-float16",
           "torch-bfloat16", "numpy-decode-float64", "numpy-table-float32", "numpy-kernel-float32", "numpy-qk-float32",
           "numpy-bshd-float32", "numpy-thd-float32", "numpy-thd-per-token-float32", "numpy-vllm-inplace-float32", "sinusoidal-float64",
           "integer-index-float64",
           "length-normalised-float64", "binary-float64", "learned-float64", "attention-float64", "attention-decode-float64",
           "numpy-position-ids-float64", "numpy-model-float64", "numpy-alibi-float64", "numpy-alibi-bhqk-float64", "numpy-t5-bias-float64", "numpy-t5-lookup-float64",
           "numpy-xpos-float64"]


def _shipped_all_checked(proc):
    """Every shipped implementation, each with checks that ran and none failed (stderr has a line per
    implementation as it finishes, stdout the summary)."""
    import importlib.util

    # an implementation's line ends with how far the run is; a line of a property still running (on a slow machine)
    # names an implementation too, and is not one of them
    lines = [ln for ln in proc.stderr.splitlines()
             if ln.startswith("ropespec: ") and re.search(r"\(\d+ of \d+ done(, ~\d+:\d\d left)?\)$", ln)]
    report = json.loads(Path(proc.report).read_text())  # the names from the run's report, not from progress text
    names = [impl["name"] for impl in report["implementations"]]
    want = SHIPPED if importlib.util.find_spec("torch") else [n for n in SHIPPED if not n.startswith("torch")]
    assert names == want, names
    assert all(impl["checked"] and impl["passed"] for impl in report["implementations"]), \
        [impl["name"] for impl in report["implementations"] if not (impl["checked"] and impl["passed"])]
    # piped (CI logs), a line per implementation says its expected failures: 7 xfails are not "0 passed, 0 failed,
    # 0 skipped"; the summary line says the same
    toy = next(ln for ln in lines if ln.startswith("ropespec: length-normalised-float64:"))
    m = re.search(r"(\d+) expected failures? \((\d+) of (\d+) done, ~\d+:\d\d left\)$", toy)  # and how far the run is
    assert m and int(m[1]) >= 1 and (int(m[2]), int(m[3])) == (lines.index(toy) + 1, len(want)), toy
    assert lines[-1].endswith(f"({len(want)} of {len(want)} done)"), lines[-1]
    assert re.search(r"\b0 failed, \d+ skipped, 0 errors", proc.stdout), proc.stdout[-500:]
    for line in proc.stdout.splitlines():  # what is skipped is skipped for a stated reason
        m = re.match(r"^\S+\s+\S+(?: \(\w+\))?\s+skip\s*(.*)$", line)
        assert m is None or m[1].strip(), line


def _every_proof_listed(proc):
    from ropespec.spec import proofs

    for pid, pr in proofs.ALL.items():
        line = next(x for x in proc.stdout.splitlines() if x.startswith(pid + " "))
        assert pr.kind in line and (("verified" in line) == (pr.fn is not None)), line
        if pr.about:
            assert f"{len(pr.about)}/{len(pr.about)}" in line, line


def _verdicts(proc) -> dict[str, dict[str, str]]:
    """Implementation name -> {row label: "pass", "skip" or "fail [word]"}, read from the run's --json report (the
    text folds skips of one reason into a row, and a loaded machine may print progress between rows): the label is
    the invariant, with its property where that is not the invariant's own (as the table says it)."""
    from ropespec.properties.results import Result
    from ropespec.report import result_label

    out: dict[str, dict[str, str]] = {}
    for impl in json.loads(Path(proc.report).read_text())["implementations"]:
        rows = out.setdefault(impl["name"], {})
        for d in impl["results"]:
            r = Result.from_json(d, implementation=impl["name"], seed=None, profile=None)
            if r.applicable:
                rows[result_label(r)] = f"{r.status} [{r.diagnosis}]" if r.status == "fail" and r.diagnosis else r.status
    return out


def _words(proc) -> dict[str, str]:
    """invariant -> status and word ("fail [layout]", "pass") of a run of one implementation."""
    [rows] = _verdicts(proc).values()
    return rows


def _interpreted(proc):
    """The header says the kernel runs in Triton's interpreter and its launcher's torch.cuda.device is a no-op."""
    head = " ".join(proc.stdout.split())
    assert "Triton kernels run in Triton's interpreter (1 kernel of triton_rotary.py;" in head, head[:600]
    assert "torch.cuda.device(...) of a CPU tensor is a no-op there" in head, head[:600]
    assert _words(proc)["autograd.inverse-rotation"] == "pass", proc.stdout[-2000:]


def _backward_direction(proc):
    rows = _words(proc)
    assert rows["kernel.rotation"] == "pass" and rows["autograd.inverse-rotation"] == "fail [direction]", rows


def _liger_rope(proc):
    """Liger's rope kernel: forward and backward wrong at seq 1, named layout with the stride's evidence."""
    rows = _words(proc)
    assert rows == {"kernel.qk": "fail [layout]", "autograd.inverse-rotation": "fail [layout]"}, rows
    assert "with one token per batch row (seq 1) rows come out wrong" in " ".join(proc.stdout.split())


def _liger_llama4(proc):
    """Liger's Llama 4 kernel in place: batch row 0's positions for every row, forward and backward."""
    rows = _words(proc)
    assert rows["rope.layout"] == "fail [layout]" and rows["autograd.inverse-rotation"] == "fail [layout]", rows
    assert "batch row 0" in proc.stdout


def _position_verdicts(proc) -> dict[str, dict[str, str]]:
    """TARGET function name -> {position-ids invariant: "pass", "skip" or "fail [word]"}."""
    return {name.rpartition(":")[2]: {k.partition(" (")[0]: v for k, v in rows.items()
                                      if k.startswith("position-ids.")} for name, rows in _verdicts(proc).items()}


def _position_examples(proc):
    """Qwen2.5-VL's builders pass (the one-sequence one skips the batch invariants), each twin fails with the word its
    docstring names, and no other."""
    sys.path.insert(0, str(ROOT / "examples"))
    import position_ids_bugs

    rows = _position_verdicts(proc)
    assert set(rows["qwen2_5_vl_batch"].values()) == {"pass"} and len(rows["qwen2_5_vl_batch"]) == 6, rows
    plain = rows["qwen2_5_vl"]
    assert [plain[f"position-ids.{k}"] for k in ("text", "grid", "time", "resume", "batch", "decode")] == \
        ["pass"] * 4 + ["skip"] * 2, plain
    twins = [n for n in dir(position_ids_bugs) if n.startswith("qwen2_5_vl_")]
    assert sorted(twins) == sorted(n for n in rows if n not in ("qwen2_5_vl", "qwen2_5_vl_batch")), rows
    for twin in twins:
        word = getattr(position_ids_bugs, twin).__doc__.split(":")[0].strip()
        failed = {v for v in rows[twin].values() if not v.startswith(("pass", "skip"))}
        assert failed == {f"fail [{word}]"}, (twin, rows[twin])


def _bias_verdicts(proc) -> dict[str, dict[str, str]]:
    """TARGET function name -> {alibi, t5-bias or xpos invariant: "pass", "skip" or "fail [word]"}."""
    return {name.rpartition(":")[2]: {k.partition(" (")[0]: v for k, v in rows.items()
                                      if k.startswith(("alibi.", "t5-bias.", "xpos."))}
            for name, rows in _verdicts(proc).items()}


def _bias_examples(proc):
    """The plain functions of examples/biases.py pass (the slopes alone skip the bias invariants, with the reason);
    each twin of examples/biases_bugs.py fails with the word its docstring names, and no other."""
    sys.path.insert(0, str(ROOT / "examples"))
    import biases_bugs

    rows = _bias_verdicts(proc)
    assert rows, proc.stdout[-2000:]
    for good in ("alibi", "alibi_batched", "bucket", "lookup", "xpos"):
        if good in rows:
            assert set(rows[good].values()) == {"pass"} and len(rows[good]) >= 3, rows[good]
    if "slopes" in rows:
        assert rows["slopes"]["alibi.slopes"] == "pass" and list(rows["slopes"].values()).count("skip") == 3, rows
    twins = [n for n in rows if n not in ("alibi", "alibi_batched", "slopes", "bucket", "lookup", "xpos")]
    assert twins, rows
    for twin in twins:
        word = getattr(biases_bugs, twin).__doc__.split(":")[0].strip()
        failed = {v for v in rows[twin].values() if not v.startswith(("pass", "skip"))}
        assert failed == {f"fail [{word}]"}, (twin, rows[twin])


#: what a command's output must also show, beyond its exit code: by the command, or by how it starts
EXTRA = {"ropespec check": _shipped_all_checked, "ropespec proofs": _every_proof_listed,
         "ropespec check examples/triton_rotary.py:kernel ": _interpreted,
         "ropespec check examples/triton_rotary.py:kernel_backward_unsigned ": _backward_direction,
         "ropespec check ropespec.implementations.adapters.liger:rope ": _liger_rope,
         "ropespec check ropespec.implementations.adapters.liger:llama4 ": _liger_llama4,
         "ropespec check examples/position_ids.py:qwen2_5_vl ": _position_examples,
         "ropespec check examples/biases.py:alibi ": _bias_examples,
         "ropespec check examples/biases.py:alibi_batched ": _bias_examples,
         "ropespec check examples/biases.py:bucket ": _bias_examples,
         "ropespec check examples/biases.py:xpos ": _bias_examples}


def _extra(command: str):
    return EXTRA.get(command) or next((fn for key, fn in EXTRA.items() if key.endswith(" ") and
                                       command.startswith(key)), None)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A directory with README's my_rope.py, a docs/ folder, and the repository's examples and
    implementations (README's commands name them by path)."""
    d = tmp_path_factory.mktemp("readme")
    for name, code in docs_text.python_files().items():
        (d / name).write_text(code)
    (d / "docs").mkdir()
    for name in ("examples", "implementations", "properties", "conftest.py", "pyproject.toml"):
        (d / name).symlink_to(ROOT / name)
    return d


def test_readme_commands_were_found():
    assert len(COMMANDS) >= 15 and any(exit_ == 1 for _, exit_ in COMMANDS)


@pytest.mark.parametrize("command, exit_code", COMMANDS, ids=[c[:60] for c, _ in COMMANDS])
def test_readme_command(command, exit_code, scratch, monkeypatch, cli):
    why = _why_not(command)
    if why:
        pytest.skip(why)
    if "--array torch" in command or "adapters.hf" in command:
        pytest.importorskip("torch")
    if "adapters.hf" in command or " transformers.models." in command:
        pytest.importorskip("transformers")
    if "adapters.diffusers" in command:
        pytest.importorskip("torch")
        pytest.importorskip("diffusers")
    if "triton" in command or "liger" in command:
        pytest.importorskip("torch")
        pytest.importorskip("triton")
    if "liger" in command:
        pytest.importorskip("liger_kernel")
    if "rotary_xpos" in command:
        pytest.importorskip("rotary_embedding_torch")
    if "--plot" in command:
        pytest.importorskip("matplotlib")
    argv = shlex.split(command)
    report = scratch / "shipped.json"
    if argv[:2] == ["ropespec", "check"] and "--json" not in argv and _extra(command):
        argv += ["--json", str(report)]  # the same run, with its report on disk for the checks to read
    t0 = time.monotonic()
    if argv[0] == "ropespec" and command not in IN_A_PROCESS:
        monkeypatch.syspath_prepend(str(scratch))  # as PYTHONPATH=scratch
        proc = cli(*argv[1:], cwd=scratch)
    else:
        if argv[0] == "ropespec":
            argv = [sys.executable, "-m", "ropespec", *argv[1:]]
        elif argv[0] == "pytest":
            argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
        proc = subprocess.run(argv, cwd=scratch, capture_output=True, text=True,  # generous: a loaded machine
                              timeout=3600, env={**os.environ, "PYTHONPATH": str(scratch)})
    assert proc.returncode == exit_code, (f"README says exit {exit_code}, got {proc.returncode} after "
                                          f"{time.monotonic() - t0:.0f} s:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    if _extra(command):
        proc.report = report
        _extra(command)(proc)


#: README commands started as processes of their own, as a user's shell starts them (the console script, its exit
#: code, its standard error): every shipped implementation and the help. The others run through the same entry
#: function, ropespec.cli.main, in this test's process, from the scratch folder: the same code without another
#: interpreter's start and imports (their TARGETs run in worker processes either way; tests/test_cli.py starts the
#: command line as a process too).
IN_A_PROCESS = ("ropespec check", "ropespec check --help")


def _check_parser():
    from ropespec.cli import parser

    return parser().commands["check"]


def test_every_option_is_stated_once_and_shown_alike_everywhere():
    """Every command's options come from its request's fields (ropespec/request.py): the parser, the generated Options
    page (each option with its choices and default) and the Python API's keywords say the same, and the check
    command's reference page points at the generated page instead of a list of its own."""
    from ropespec import docsite, request
    from ropespec.cli import parser

    page = docsite.options_page()
    commands = parser().commands
    for name, cls in request.REQUESTS.items():
        options = {o for a in commands[name]._actions for o in a.option_strings if o not in ("-h", "--help")}
        stated = {o for _, flags, _, _, _ in request.options_of(cls) for o in flags if o.startswith("-")}
        assert stated == options, (name, sorted(stated ^ options))
        for a in commands[name]._actions:
            if a.option_strings and a.choices and "-h" not in a.option_strings:
                assert f"`{', '.join(a.option_strings)}` `{'|'.join(a.choices)}`".replace("|", "\\|") in page, \
                    (name, a.option_strings)
            if a.option_strings and a.default not in (None, False, [], ()) and "-h" not in a.option_strings:
                row = next(line for line in page.splitlines() if line.startswith(f"| `{', '.join(a.option_strings)}`"))
                assert f"| {a.default} |" in row, (name, a.option_strings, a.default, row)
    from ropespec.api import check

    assert set(request.api_keywords(request.CheckRequest)) == set(inspect.signature(check).parameters) - {"fn", "expect"}
    ref = docs_text.page("reference/check.md")
    assert "[Options](options.md)" in ref and "`--allow-skip`: " not in ref


def test_the_json_schema_names_every_field_the_report_writes(tmp_path):
    """README's JSON block has every key `--json` writes (top level, implementation, result), and no other."""
    from ropespec import check

    result = check("ropespec.implementations.numpy_rope:make", seed=1, invariants=["rope.norm-per-pair"])
    data = result.to_json()
    block = re.search(r"```json\n(.*?)```", docs_text.page("reference/reports.md"), re.S)[1]
    keys = set(re.findall(r'"(\w+)":', block))
    written = set(data) | set(data["implementations"][0]) | set(data["implementations"][0]["results"][0])
    assert written <= keys, sorted(written - keys)
    # the inner keys of output, configuration (a matrix's: expect, dtype, layout), a counterexample and a failure record
    from ropespec.implementations.contract import FAILURE_FIELDS

    assert set(FAILURE_FIELDS) <= keys, sorted(set(FAILURE_FIELDS) - keys)
    inner = {"bytes", "cut", "text", "expect", "dtype", "layout", "a", "b", "x", *FAILURE_FIELDS, *data["request"]}
    assert keys - written <= inner, sorted(keys - written - inner)


#: README's worked examples: the command each ```text block shows the output of (seeded, as the output says)
SHOWN = {0: "ropespec check my_rope.py:apply --expect '{\"head_dim\": 128, \"rope_theta\": 500000}' --seed 1227376188",
         1: "ropespec check my_rope.py:apply --expect llama3.1-8b --seed 1",
         2: "ropespec precision my_rope.py:apply --expect '{\"head_dim\": 128, \"rope_theta\": 500000}'"}


@pytest.mark.parametrize("block", sorted(SHOWN))
def test_readme_shows_what_its_commands_print(block, scratch, monkeypatch, cli):
    """Every line of README's output blocks is a line the command prints (run here with the seed the output states),
    but for what it elides ('...', a replay's '{...}') and the warm-up's seconds."""
    text = re.findall(r"```text\n(.*?)```", docs_text.page("README.md"), re.S)[block]
    monkeypatch.syspath_prepend(str(scratch))
    monkeypatch.setenv("COLUMNS", "100")
    proc = cli(*shlex.split(SHOWN[block])[1:], cwd=scratch)
    printed = [line.rstrip() for line in proc.stdout.splitlines()]
    for line in text.splitlines():
        if "..." in line or "warm-up" in line:
            continue
        assert line.rstrip() in printed, (line, proc.stdout[-3000:])


#: the checking guide's worked examples (docs/guide/check.md): the command each ```text block shows the output of,
#: with the seed the output states
GUIDE_SHOWN = {0: "ropespec check rope.py:apply --expect '{\"head_dim\": 128, \"rope_theta\": 500000}' --seed 1338172700",
               1: "ropespec check rope.py:apply --expect llama3.1-8b --seed 893895196"}


def test_the_checking_guide_shows_each_of_its_output_blocks():
    assert len(re.findall(r"```text\n", docs_text.page("guide/check.md"))) == len(GUIDE_SHOWN)


@pytest.mark.parametrize("block", sorted(GUIDE_SHOWN))
def test_the_checking_guide_shows_what_its_commands_print(block, scratch, monkeypatch, cli):
    """Every line of the guide's output blocks is a line the command prints, in the order printed (run here with the
    seed the output states): '...' stands for what the guide leaves out of a line to fit its code box, and a line of
    '...' alone for rows left out."""
    text = re.findall(r"```text\n(.*?)```", docs_text.page("guide/check.md"), re.S)[block]
    monkeypatch.syspath_prepend(str(scratch))
    proc = cli(*shlex.split(GUIDE_SHOWN[block])[1:], cwd=scratch)
    printed = [line.rstrip() for line in proc.stdout.splitlines()]
    at = 0
    for line in text.splitlines():
        if line.strip() == "...":
            continue
        shown = re.compile(".*".join(map(re.escape, line.rstrip().split("..."))))
        found = next((i for i in range(at, len(printed)) if shown.fullmatch(printed[i])), None)
        assert found is not None, (line, proc.stdout[-3000:])
        at = found + 1


def _benchmark(name: str):
    """A script of benchmarks/ as a module (they import each other by name, as a script run from there does)."""
    import importlib.util

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_readme_speed_section_is_made_from_the_benchmarks_record():
    """README's timings are benchmarks/verdict_time.py's last recorded run (--record), its Speed section as the script
    makes it from that record (--readme): the command, date and machine beside every figure, none copied by hand."""
    verdict_time = _benchmark("verdict_time")
    record = json.loads(verdict_time.RECORD.read_text())
    section = verdict_time.readme_section(record)
    assert section in docs_text.page("README.md"), section
    assert record["command"].endswith("--record") and "--only" not in record["command"]
    # what it quotes is there: every case of README's (the fast tier's time among them) and the four ratios
    assert all(name in record["cases"] for name in verdict_time.README_CASES), sorted(record["cases"])
    assert len(re.findall(r"^\| .+ \| [0-9.]+x \|", section, re.M)) == len(verdict_time.README_RATIOS)


def test_readme_quotes_the_model_batterys_record():
    """README's whole-model timings are benchmarks/model_battery.py's last recorded run, as the script makes them from
    that record: every case within the target (60 s, 2 GB), the command, date and machine beside them."""
    battery = _benchmark("model_battery")
    record = json.loads(battery.RECORD.read_text())
    section = battery.readme_section(record)
    assert section in docs_text.page("README.md"), section
    assert record["command"].endswith("--record") and "--only" not in record["command"] and record["repeats"] >= 3
    assert set(row["case"] for row in record["rows"]) == set(battery.CASES)
    assert all(row["met"] and row["median_s"] <= battery.TARGET_S for row in record["rows"]), record["rows"]


def _sweep_counts(text: str) -> tuple[int, int, int]:
    """(model types with RoPE, checked, held) as docs/transformers_sweep.md's rows and not-checked list say them: a
    model type is checked where it has a row, and holds where each of its rows held in float32 and bfloat16."""
    rows: dict[str, list[bool]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 7 and cells[2] in ("held", "fail", "skipped", "not run"):
            rows.setdefault(cells[0].split(" (")[0], []).append(cells[2] == cells[3] == "held")
    unchecked = re.findall(r"^- ([\w-]+): ", text.split("\nnot checked:\n", 1)[1], re.M)
    assert not set(unchecked) & set(rows), set(unchecked) & set(rows)
    return len(rows) + len(unchecked), len(rows), sum(all(v) for v in rows.values())


def test_readme_states_the_transformers_sweeps_counts_with_its_command():
    """README's counts of transformers' RoPE model types are what the sweep's table (docs/transformers_sweep.md) holds,
    and the command that made it stands beside them."""
    sweep = (ROOT / "docs" / "transformers_sweep.md").read_text()
    found, checked, held = _sweep_counts(sweep)
    text = " ".join(docs_text.page("README.md").split())
    said = (f"{found} model types whose source has RoPE, {checked} checked, {held} of them holding every invariant in "
            f"float32 and bfloat16")
    assert said in text and said in " ".join(sweep.split()), said
    assert "`python benchmarks/transformers_sweep.py -j 2 --profile ci`" in text
    tail = sweep.split("\nnot checked:\n", 1)[1]
    assert f"the other {found - checked} " in text and len(re.findall(r"^- ", tail, re.M)) == found - checked


def test_the_sweep_counts_come_from_the_rows():
    """The counting rule itself: a model type with one failing row of two does not hold; one with no row is counted
    only where the not-checked list gives it a reason."""
    table = ("| model type | e | float32 | bfloat16 | w | s | t |\n|---|---|---|---|---|---|---|\n"
             "| a | x | held | held |  | s | 1 |\n| b (hf_axes:b) | x | held | held |  | s | 1 |\n"
             "| b | x | held | fail | w | s | 1 |\n\nnot checked:\n\n- c: its reason\n")
    assert _sweep_counts(table) == (3, 2, 1)


def _plumbing_counts(text: str) -> tuple[int, int, int]:
    """(text model types, checked, held) as docs/plumbing_sweep.md's rows and not-checked list say them: a model type
    is checked where it has a row, and holds where no cell of its row failed or erred."""
    rows: dict[str, bool] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 4 and cells[2] in ("held", "**fail**", "**error**", "skip"):
            rows[cells[0].split(" (")[0]] = not any(c in ("**fail**", "**error**") for c in cells[2:-2])
    unchecked = re.findall(r"^- ([\w-]+): ", text.split("\nnot checked:\n", 1)[1], re.M)
    assert not set(unchecked) & set(rows), set(unchecked) & set(rows)
    return len(rows) + len(unchecked), len(rows), sum(rows.values())


def test_readme_states_the_plumbing_sweeps_counts_with_its_command():
    """README's counts of transformers' text model types whose plumbing was checked are what the plumbing sweep's
    table (docs/plumbing_sweep.md) holds, and the command that made it stands beside them."""
    sweep = (ROOT / "docs" / "plumbing_sweep.md").read_text()
    found, checked, held = _plumbing_counts(sweep)
    text = " ".join(docs_text.page("README.md").split())
    said = f"{found} text model types, {checked} checked, {held} of them holding every invariant"
    assert said in text and said in " ".join(sweep.split()), said
    assert "`python benchmarks/plumbing_sweep.py -j 2`" in text and "`python benchmarks/plumbing_sweep.py -j 2`" in sweep
    tail = sweep.split("\nnot checked:\n", 1)[1]
    assert len(re.findall(r"^- ", tail, re.M)) == found - checked


def test_the_plumbing_sweep_counts_come_from_the_rows():
    """The counting rule itself: a row with a failing cell does not hold; a model type with no row is counted only
    where the not-checked list gives it a reason."""
    table = ("| model type | e | positions | padding | w | s |\n|---|---|---|---|---|---|\n"
             "| a | x | held | skip |  | 1 |\n| b (M-RoPE text path) | x | held | **fail** | w | 1 |\n"
             "\nnot checked:\n\n- c: its reason\n")
    assert _plumbing_counts(table) == (3, 2, 1)
