"""The report's sentences read as sentences: each wording that once came out garbled has a test here."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from ropespec.implementations.zoo import members
from ropespec.properties.diagnose.structure import _rotary_dim_evidence
from ropespec.properties.framework import all_properties, run_property

ZOO = {m.name: m for m in members()}
PROPERTIES = {p.name: p for p in all_properties()}


def _run(member: str, prop: str, seed: int = 0):
    return run_property(PROPERTIES[prop], ZOO[member].impl(), profile="dev", seed_value=seed)


def test_rotary_dim_evidence_names_the_dims():
    assert _rotary_dim_evidence(4, [], 2) == ("all 4 dims rotate and none passes through, expected rotary_dim 2 "
                                              "(2 rotating and dims 2..3 passing through)")
    assert "[]" not in _rotary_dim_evidence(8, [6, 7], 4) and "dims 6, 7" in _rotary_dim_evidence(8, [6, 7], 4)
    r = _run("partial_ignored", "partial_passthrough")
    assert r.diagnosis == "rotary-dim" and "[]" not in r.message, r.message


def test_a_sweep_failure_says_times_the_bound_and_where_the_class_holds():
    r = _run("off_by_one", "large_positions")
    assert r.status == "fail"
    assert "times the bound" in r.message and "x over" not in r.message and "infx" not in r.message
    assert "nowhere" not in r.message and "holds at no position swept" in r.message


def test_no_numpy_scalar_repr_in_a_message():
    r = _run("table_wrap", "relative_position", seed=3)
    assert r.status == "fail" and "np.float" not in r.message, r.message
    dtype = r.counterexample["expect"]["dtype"]
    assert f"ulp of {dtype})" in r.message  # counted in the implementation's dtype


def _scratch(cli, tmp_path, name, source, *args):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    return cli(*args, cwd=tmp_path)


def test_counts_are_singular_when_one(cli, tmp_path):
    proc = _scratch(cli, tmp_path, "mine", """
        import numpy as np
        def rope(x, positions):
            return x.copy()
        """, "check", "mine.py:rope", "--expect", "llama2-7b", "--seed", "1", "--invariant", "rope.identity-at-zero")
    assert "(1 check on 1 implementation)" in proc.stdout, proc.stdout[-500:]


def test_a_one_argument_function_is_told_what_a_plain_function_and_a_factory_take(cli, tmp_path):
    proc = _scratch(cli, tmp_path, "one", """
        def rope(x):
            return x
        """, "check", "one.py:rope", "--expect", "llama2-7b", "--seed", "1", "--invariant", "rope.identity-at-zero")
    assert proc.returncode == 2  # neither form: bad usage, one line
    assert "a plain function takes (x, positions), a factory takes (expect)" in proc.stderr, proc.stderr[-800:]


def test_a_users_sinusoidal_encoding_reports_the_leakage_as_an_expected_failure(cli, tmp_path):
    """README: additive.cross-term-leakage is a documented non-invariant, reported as an expected
    failure with its spread, for a user's encoding as for the shipped one."""
    proc = _scratch(cli, tmp_path, "pe", """
        import numpy as np
        def pe(positions, d):
            p = np.asarray(positions, dtype=np.float64)[:, None]
            ang = p * 10000.0 ** (-2 * np.arange(d // 2)[None, :] / d)
            out = np.empty((len(positions), d))
            out[:, 0::2], out[:, 1::2] = np.sin(ang), np.cos(ang)
            return out
        """, "check", "pe.py:pe", "--family", "sinusoidal", "--seed", "2",
        "--expect", '{"head_dim": 64, "convention": "interleaved", "dtype": "float64", "max_position": 8192}')
    row = next(line for line in proc.stdout.splitlines() if "additive.cross-term-leakage" in line)
    assert re.search(r"\bxfail\b", row) and "spread" in row and "documented non-invariant" in row, row
    assert proc.returncode == 0, proc.stdout[-800:]


def test_fingerprint_of_metas_interleaved_llama2_names_the_preset_and_the_pairing(cli, tmp_path):
    proc = _scratch(cli, tmp_path, "meta", """
        import numpy as np
        def rope(x, positions):
            d = x.shape[-1]
            freqs = 1.0 / (10000.0 ** (np.arange(0, d, 2)[: d // 2].astype(np.float64) / d))
            ang = np.outer(np.asarray(positions, dtype=np.float64), freqs)
            xc = x.reshape(x.shape[0], -1, 2)
            z = (xc[..., 0] + 1j * xc[..., 1]) * np.exp(1j * ang)
            return np.stack([z.real, z.imag], axis=-1).reshape(x.shape).astype(x.dtype)
        """, "fingerprint", "meta.py:rope", "--expect", '{"head_dim": 128, "dtype": "float64"}')
    assert "it has the frequencies of llama2-7b" in proc.stdout and "but pairs interleaved" in proc.stdout, proc.stdout


def test_check_help_lists_exit_codes_examples_and_what_expect_takes():
    proc = subprocess.run([sys.executable, "-m", "ropespec", "check", "--help"], capture_output=True, text=True, timeout=60)
    text = proc.stdout
    assert proc.returncode == 0 and "exit codes:" in text
    for code in ("0 ", "1 ", "2 ", "130"):
        assert re.search(rf"^\s+{code}", text, re.M), code
    assert "143 terminated" in text
    assert len(re.findall(r"^\s+ropespec check \S+", text, re.M)) >= 2
    flat = " ".join(text.split())
    for what in ("a preset name", "inline JSON", "a JSON file", "config.json"):
        assert what in flat, what


def test_the_terminal_table_keeps_the_notes_it_has_no_room_for():
    """xfail evidence and 'declared to fail ... but it held' once lived only in a cut-off detail column."""
    import io

    from rich.console import Console

    from ropespec import check, report

    result = check("ropespec.implementations.sinusoidal:make", family="sinusoidal", seed=0,
                   invariants=["additive.cross-term-leakage", "sinusoidal.norm"])
    buf = io.StringIO()
    report.render(result.reports, Console(file=buf, force_terminal=True, width=80, emoji=False, color_system=None),
                  seed=0, profile="dev")
    text = buf.getvalue()
    assert "notes:" in text
    note = text.split("notes:", 1)[1]
    assert "additive.cross-term-leakage" in note
    assert "expected failure" in note or "declared to fail" in note, note


def test_piped_lines_are_cut_only_where_they_say_so():
    """Piped, a failure's detail was cut at 160 characters with nothing to say so."""
    import io

    from rich.console import Console

    from ropespec import check, report

    result = check("ropespec.implementations.zoo.rope.off_by_one:make", invariants=["rope.identity-at-zero"], seed=0,
                   expect={"head_dim": 64, "max_position": 8192})
    buf = io.StringIO()
    report.render(result.reports, Console(file=buf, force_terminal=False, width=80, emoji=False), seed=0, profile="dev")
    row = next(line for line in buf.getvalue().splitlines() if "rope.identity-at-zero  " in line)
    message = result.failures[0].message
    assert message in buf.getvalue()  # in full, under "N failing"
    if len(row) < len(message):
        assert row.endswith("[... cut: in full under '1 failing' below]"), row


def test_a_non_finite_output_is_said_to_be_the_implementations_whichever_side_it_is_on():
    """'=nan, but should be nan' and '|error| nan > bound nan' said nothing: a NaN in either side of a comparison of
    the implementation with itself is a non-finite finding about the implementation."""
    import numpy as np

    from ropespec.properties.strategies import make_vectors
    from ropespec.spec import Expect

    for name in ("composition", "linearity"):
        r = _run("nan_beyond", name, seed=1)
        assert r.status == "fail" and r.diagnosis == "non-finite", (name, r.message)
        assert "should be nan" not in r.message and "the implementation's output is non-finite" in r.message, r.message
    impl = ZOO["nan_beyond"].impl()
    e = Expect(head_dim=8, dtype="float64")
    case = {"expect": e, "m": 70000, "n": 70001, "shift": -60000, "q, k": make_vectors(e, 2)}
    try:
        PROPERTIES["relative_position"].check(impl.bind, case)
    except Exception as err:  # the scores at m, n (the other side) are NaN, the shifted ones finite
        assert "but <f(q, m), f(k, n)> is nan there" in str(err) and "nan > bound nan" not in str(err), str(err)
        assert err.diagnosis == "non-finite"
    else:
        raise AssertionError("NaN scores passed rope.relative-position")
    finally:
        impl.close()


#: a correct numpy RoPE up to its rotated y, for the scratch functions below to spoil in one line each
ROTATED = """
        import numpy as np
        def rope(x, positions):
            d = x.shape[1]
            th = 10000.0 ** (-np.arange(0, d, 2) / d)
            c, s = np.cos(positions[:, None] * th), np.sin(positions[:, None] * th)
            a, b = x[:, : d // 2], x[:, d // 2 :]
            y = np.concatenate([a * c - b * s, a * s + b * c], axis=1)
"""


def test_locality_says_the_rule_not_a_ratio_to_a_denormal(tmp_path):
    from ropespec import check

    (tmp_path / "leak.py").write_text(textwrap.dedent(ROTATED + """
            y[:, -1] += 1e-3 * x[:, 0]  # dim 0 leaks into the last dim
            return y.astype(x.dtype)
        """))
    result = check(f"{tmp_path / 'leak.py'}:rope", {"head_dim": 16}, seed=0, invariants=["rope.locality"])
    [r] = result.results
    assert r.status == "fail" and "but should be 0: only the dims paired with j may change" in r.message, r.message
    assert r.worst is None and "of bound" not in result.report().split("failing")[0], result.report()


def test_non_finite_values_that_depend_on_the_call_are_said_to(tmp_path):
    """xPos's scale overflows with the call's largest position: a row finite alone is no non-finite position."""
    from ropespec import check

    (tmp_path / "xpos.py").write_text(textwrap.dedent(ROTATED + """
            with np.errstate(over="ignore", invalid="ignore"):  # a scale of the call's length, in float32
                scale = np.float32(2.0) ** np.float32(positions.max() / 512.0)
                return (y * (scale / scale)).astype(x.dtype)
        """))
    result = check(f"{tmp_path / 'xpos.py'}:rope", {"head_dim": 16}, seed=0, invariants=["rope.conformance:large_positions"])
    [r] = result.results
    assert r.status == "fail" and r.diagnosis == "non-finite", r.message
    assert "finite when called with p alone" in r.message and "from p =" not in r.message, r.message


def test_an_unknown_preset_is_one_line_without_a_repeated_prefix(cli, tmp_path):
    proc = _scratch(cli, tmp_path, "x", "", "check", "ropespec.implementations.numpy_rope:make", "--expect", "llama3-8b")
    assert proc.returncode == 2 and "--expect: expect:" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "did you mean llama3.1-8b?" in proc.stderr, proc.stderr


def test_the_progress_bar_names_and_counts_only_checks_that_run_and_fits_80_columns():
    """A property made for another kind of implementation moves the bar but is neither named nor counted; the count
    is the report's number of checks, with those failed and (several at once) those running; the time left is the
    time so far scaled by the share still to do; at 80 columns a long description gives way to the count and the
    times."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from ropespec.commands.check import _Display

    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    display = _Display(console, total=4, implementations=2, parallel=True)
    long = "ropespec.implementations.zoo.a_very_long_module_name_for_a_target:make_the_function"
    display.advance(SimpleNamespace(applicable=False, invariant="decode.attention-consistency", implementation=long,
                                    status="skip"))
    task = display.bar.tasks[0]
    assert task.description == "checking" and task.fields["checks"] == "0 checks" and task.completed == 1
    display.advance(SimpleNamespace(applicable=True, invariant="rope.conformance", implementation=long, status="fail"))
    assert display.bar.tasks[0].description == f"rope.conformance ({long})"
    assert display.bar.tasks[0].fields["checks"] == "1 check, 1 failed, 1 running"
    task.start_time -= 10.0  # the clock: 10 s for three quarters of the run
    display.advance(SimpleNamespace(applicable=True, invariant="rope.conformance", implementation="b", status="pass"))
    assert display.bar.tasks[0].fields["checks"] == "2 checks, 1 failed, 2 running"
    assert re.fullmatch(r"~0:0[34] left", display.bar.tasks[0].fields["left"]), display.bar.tasks[0].fields
    display.forget([SimpleNamespace(applicable=True, status="pass")])  # a lost attempt, run again: undone
    assert display.bar.tasks[0].fields["checks"] == "1 check, 1 failed, 2 running"
    out = Console(file=io.StringIO(), width=80, force_terminal=False)
    out.print(display.bar.make_tasks_table(display.bar.tasks))
    line = out.file.getvalue().splitlines()[0]
    assert len(line) <= 80 and re.search(r"1 check, 1 failed, 2 running \d+:\d\d:\d\d ~\d+:\d\d left$",
                                         line.rstrip()), line
    assert line.startswith("rope.conformance (") or "…" in line, line
    wide = Console(file=io.StringIO(), force_terminal=True, width=200)  # the bar after the label, not at the far edge
    shown = _Display(wide, total=4)
    shown.advance(SimpleNamespace(applicable=True, invariant="rope.conformance", implementation=long, status="pass"))
    out = Console(file=io.StringIO(), width=200, force_terminal=False)
    out.print(shown.bar.make_tasks_table(shown.bar.tasks))
    line = out.file.getvalue().splitlines()[0]
    assert 0 < line.index("━") <= 62 and len(line.rstrip()) < 120, line


def test_skips_of_one_reason_are_one_row_and_each_in_the_json(cli, tmp_path):
    """The scaling properties skipped for an unscaled expectation say so once ("6 scaling properties", with the
    reason), not once each; the JSON report keeps a result per property."""
    import json

    report = tmp_path / "r.json"
    code, out, err = cli("check", "ropespec.implementations.numpy_rope:make", "--expect", "llama2-7b", "--seed", "1",
                         "--json", report)
    assert code == 0, out[-2000:]
    rows = [ln for ln in out.splitlines() if "no length-extension method (rope_type 'default')" in ln]
    assert len(rows) == 1 and "6 scaling properties" in rows[0] and " skip " in rows[0], rows
    assert not [ln for ln in out.splitlines() if "scaling.bounded" in ln], out
    [impl] = json.loads(report.read_text())["implementations"]
    skipped = [r["invariant"] for r in impl["results"] if r["status"] == "skip" and "rope_type 'default'" in r["message"]]
    assert len(skipped) == 6 and "scaling.bounded" in skipped, skipped


def test_piped_progress_says_a_long_property_once_then_a_heartbeat_and_no_estimate_without_evidence(capsys):
    """In a CI log a property still running is said once (it was every 10 s: 24 lines for a four-implementation run
    under load), then, after HEARTBEAT_S with nothing printed, a heartbeat with how far the run is; the time left is
    said once a fifth of the run is done (a 20 s run said "~2:48 left" from its first checks)."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from ropespec.commands import check

    display = check._Display(Console(file=io.StringIO(), force_terminal=False), total=20, implementations=2)
    for seconds in (5, 15, 25, 35):
        display.running_now("impl", "decode.consistency", "example 3", seconds)
    said = capsys.readouterr().err.splitlines()
    assert said == ["ropespec: impl: decode.consistency still running after 5 s (example 3)"], said
    display.advance(SimpleNamespace(applicable=True, invariant="rope.conformance", implementation="impl", status="pass"))
    assert display.left() == ""  # 1 of 20 done: no evidence yet
    display.printed -= check.HEARTBEAT_S
    display.running_now("impl", "decode.consistency", "example 9", 75)
    [beat] = capsys.readouterr().err.splitlines()
    assert beat == "ropespec: still running: 1 of 20 done (1 check); now decode.consistency on impl (example 9)", beat
    for _ in range(4):
        display.advance(SimpleNamespace(applicable=True, invariant="rope.conformance", implementation="impl",
                                        status="pass"))
    display.bar.tasks[0].start_time -= 10.0
    assert re.fullmatch(r"~0:\d\d left", display.left()), display.left()  # a quarter done: an estimate


def test_long_arrays_are_summarised_where_a_person_reads_them(cli, tmp_path):
    """An expected failure's call of 4097 positions printed one line of 8,688 characters, and a counterexample every
    position of a long call: a message and a counterexample's values say a long list by its ends and its count, in
    the terminal, the JSON's message and JUnit alike; the JSON's counterexample keeps every value."""
    import json

    from ropespec.implementations.contract import Failure
    from ropespec.properties.results import Result

    f = Failure("f(x, p)", call=f"f(x, positions={list(range(4097))}); at {[[p, p, p] for p in range(40)]}")
    assert f.call == ("f(x, positions=[0, 1, 2, 3, ..., 4095, 4096] (4097 values)); at [[0, 0, 0], [1, 1, 1], "
                      "[2, 2, 2], ..., [39, 39, 39]] (40 rows)"), f.call
    assert Failure("f", call=f"positions={list(range(16))}").call == f"positions={list(range(16))}"  # short: whole
    r = Result("impl", "long_calls", "rope.conformance", "fail", note="m",
               counterexample={"positions": list(range(127)), "x": [[0.5, 1.0]] * 127})
    said = r.explain()
    assert "positions = [0, 1, 2, 3, ..., 125, 126] (127 values)" in said and "array(127, 2)" in said, said
    out = tmp_path / "r.json"
    code, out_text, _ = cli("check", "ropespec.implementations.toy_encodings:length_normalised", "--family", "sinusoidal",
              "--dtype", "float64", "--invariant", "sinusoidal.length-independent", "--seed", "0", "--json", out)
    assert code == 0 and "expected failure" in out_text, out_text
    assert max(map(len, out_text.splitlines())) < 1000, max(map(len, out_text.splitlines()))
    assert "(4097 values)" in out_text
    [result] = json.loads(out.read_text())["implementations"][0]["results"]
    assert "(4097 values)" in result["message"] and len(result["counterexample"]["positions"]) > 16


def test_a_skip_of_the_scaling_properties_says_which_method_each_is_about(cli):
    """'4 scaling properties skip: not about rope_type 'llama3', the expectation's' read as a contradiction (llama3 is
    the expectation's): a skip says what the skipped properties are about."""
    code, out, err = cli("check", "ropespec.implementations.numpy_rope:make", "--expect", "llama3.1-8b", "--seed", "1",
                         "--invariant", "scaling.linear-positions", "--invariant", "scaling.band-edges")
    row = next(ln for ln in out.splitlines() if "scaling.linear-positions" in ln)
    assert "another length-extension method than the expectation's (llama3)" in row and "not about" not in row, row


def test_every_word_the_documentation_shows_in_brackets_is_one_the_code_gives():
    """`[word]` on a page is a fault word of the vocabulary or a reading's word: README once showed `[off-by-one]`,
    which no failure carries (the fault is `[position-offset]`)."""
    from ropespec.spec import glossary, readings
    from tests import docs_text

    known = set(glossary.DIAGNOSES) | set(readings.WORDS)
    shown = set(re.findall(r"`\[([a-z0-9-]+)\]`", docs_text.TEXT))
    assert shown and shown <= known, sorted(shown - known)
