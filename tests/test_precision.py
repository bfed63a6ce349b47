"""The precision sweep: crossing positions of the low-precision zoo, safe positions of the shipped
implementations, and `ropespec precision`'s JSON and plot."""

import json
import re

import numpy as np
import pytest

from ropespec.implementations.zoo import members
from ropespec.properties import precision
from ropespec.properties.exhaustive import exhaustive
from ropespec.properties.framework import all_properties, PROPERTIES, run_property
from ropespec.cli import main
from ropespec.spec import Expect

all_properties()
LOW_PRECISION = [m for m in members() if m.diagnosis == "angle-precision" and not m.near]  # near ones: tests/test_zoo.py
EVIDENCE = {
    "fp16_positions": "positions rounded to float16",
    "bf16_positions": "positions rounded to bfloat16",
    "bf16_inv_freq": "rounded to bfloat16",  # the measured table: "the default table rounded to bfloat16"
    "bf16_cos_sin": "cos/sin tables stored in bfloat16",
    "float32_angles": "angles formed in float32",
    "fast_sincos": "angles rounded to float32 (worst",  # its float32 argument reduction, by its signature
}


def _first_crossing_dense(f, e, limit=1 << 16):
    """The first odd position whose error exceeds the declared class, scanning every odd position."""
    declared = precision.class_of(e)
    for start in range(1, limit, 256):
        pos = np.arange(start, min(start + 256, limit), 2)
        sw = precision.measure(f, e, pos, vectors=2, seed=0, classes=(declared,))
        bad = np.flatnonzero(sw.ratio[declared] > 1.0)
        if bad.size:
            return int(pos[bad[0]])
    return None


@pytest.mark.parametrize("member", LOW_PRECISION, ids=[m.name for m in LOW_PRECISION])
def test_low_precision_zoo_is_diagnosed_with_its_crossing(member):
    impl = member.impl()
    result = run_property(PROPERTIES["large_positions"], impl, profile="ci", seed_value=0)
    assert result.status == "fail" and result.diagnosis == "angle-precision", result.message
    assert EVIDENCE[member.name] in result.message
    e = impl.expect
    sw = precision.measure(impl.bind(e), e, precision.sweep_positions(e.max_position, per_octave=2), vectors=2)
    reported = sw.first_failure(precision.class_of(e))
    assert f"at p = {reported}, " in result.message
    true = _first_crossing_dense(impl.bind(e), e)
    assert true is not None and true <= reported <= 2 * true, (true, reported)


def test_fp16_positions_cross_at_2049():
    [m] = [m for m in LOW_PRECISION if m.name == "fp16_positions"]
    s = m.impl()
    assert _first_crossing_dense(s.bind(s.expect), s.expect) == 2049  # float16 holds every integer to 2048


@pytest.mark.parametrize("target, dtype, array", [
    ("ropespec.implementations.numpy_rope:make", "float64", "numpy"),
    ("ropespec.implementations.numpy_rope:make", "float32", "numpy"),
    ("ropespec.implementations.torch_rope:make", "float32", "torch"),
    ("ropespec.implementations.torch_rope:make", "bfloat16", "torch"),
])
def test_shipped_implementations_hold_the_strict_class_to_2_31(tmp_path, capsys, target, dtype, array):
    if array == "torch":
        pytest.importorskip("torch")
    out = tmp_path / "sweep.json"
    code = main(["precision", target, "--dtype", dtype, "--array", array, "--expect", '{"rope_theta": 500000}',
                 "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "held at every swept position below max_position 131072: exit 0" in text.strip().splitlines()[-1]
    data = json.loads(out.read_text())
    assert set(data) >= {"expect", "positions", "max_error", "median_error", "bounds", "safe_position"}
    assert data["positions"][-1] == 2**31 - 1 and all(p % 2 == 1 for p in data["positions"])
    assert data["max_position"] == data["expect"]["max_position"] == 131072
    assert data["safe_position"]["exact"] == 2**31 - 1, text
    # the end of the sweep is not a limit: said as such, never "holds up to p ~ 2.1e+09"
    assert f"strict {dtype} holds at every swept position, to the end of the sweep (p = 2147483647)" in text


def test_precision_reports_the_crossing_and_draws_the_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png, js = tmp_path / "p.png", tmp_path / "p.json"
    code = main(["precision", "ropespec.implementations.zoo.rope.fp16_positions:make", "--expect", '{"max_position": 32768}',
                 "--max-position", "32768", "--plot", str(png), "--json", str(js)])
    text = capsys.readouterr().out
    assert code == 1  # the declared class fails: exit 0 means it held
    assert text.strip().splitlines()[-1].startswith("the declared class (float32 output, angles in float32, inv_freq "
                                                    "in float32) fails from p = ")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(js.read_text())
    assert 1024 < data["safe_position"]["float32"] <= 2048
    assert data["growth_exponent"] is not None
    assert "float32 angles (declared) holds up to p = " in text


def test_sweep_positions_are_odd_and_log_spaced():
    pos = precision.sweep_positions(2**31, per_octave=2)
    assert pos[0] == 1 and pos[-1] == 2**31 - 1
    assert np.all(pos % 2 == 1) and np.all(np.diff(pos) > 0)
    big = pos[pos >= 16]
    assert np.all(big[1:] / big[:-1] < 1.6)  # about sqrt(2) apart: two per doubling


def test_a_saturated_bound_is_never_counted_as_holding(tmp_path, capsys):
    """float32 angles at p ~ 2e9 are off by up to 2 x the pair norm: the float32 class's bound is then at
    least that, so it promises nothing there, and the class must not be said to hold there, nor the sweep pass
    where the model runs there: noise where the class promises nothing is "holds nowhere past p", exit 1 (it said
    "held at every swept position: exit 0"). Where the model's positions end before it (max_position), it is said as
    information past them, and the verdict is about the positions the model uses (the same code exited 1 for noise
    at p = 4.7e7 of a model of 131072 positions)."""
    p = tmp_path / "naive32.py"
    p.write_text(
        "import numpy as np\n"
        "def rope(x, positions):\n"
        "    d = x.shape[1]\n"
        "    inv = (500000.0 ** (-np.arange(0, d, 2) / d)).astype(np.float32)\n"
        "    ang = positions[:, None].astype(np.float32) * inv\n"
        "    c, s = np.cos(ang), np.sin(ang)\n"
        "    x1, x2 = x[:, : d // 2], x[:, d // 2 :]\n"
        "    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)\n")
    out = tmp_path / "sweep.json"
    code = main(["precision", f"{p}:rope", "--expect", '{"rope_theta": 500000}', "--plot", str(tmp_path / "a.png")])
    text = capsys.readouterr().out
    lines = text.strip().splitlines()
    assert code == 0 and lines[-1].endswith("held at every swept position below max_position 131072: exit 0"), text
    assert lines[-2].startswith("beyond max_position 131072, to p = 2147483647 (information, not the verdict): its "
                                "output is noise from p = "), lines[-2]
    code = main(["precision", f"{p}:rope", "--expect", '{"rope_theta": 500000, "max_position": 2147483648}', "--json",
                 str(out)])
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    until = data["promises_until"]["float32"]
    assert code == 1 and until is not None and until < 2**31 - 1
    assert data["safe_position"]["float32"] <= until
    assert max(data["max_error"]) > 1.0  # the error it would have been said to hold at
    assert "float32 angles (declared) holds up to" in text and "promises nothing" in text
    last = text.strip().splitlines()[-1]
    assert f"holds nowhere past p ~ {until:.2g}" in last and "the output is noise from p = " in last, last
    # the table marks the noise as the verdict reads it
    noisy = [line for line in text.splitlines() if line.strip().startswith(str(2**31 - 1))]
    assert noisy and noisy[0].rstrip().endswith("x"), noisy


def test_the_exhaustive_and_the_sampled_sweep_say_one_thing(tmp_path, capsys):
    """The same function, sampled and exhaustive: a class whose bound saturates holds up to where it does and
    promises nothing beyond, in both (exhaustive said "bfloat16 angles: holds at every position below 1048576" where
    the sweep said it holds to p = 91)."""
    p = tmp_path / "naive32.py"
    p.write_text(
        "import numpy as np\n"
        "def rope(x, positions):\n"
        "    d = x.shape[1]\n"
        "    inv = (10000.0 ** (-np.arange(0, d, 2) / d)).astype(np.float32)\n"
        "    ang = positions[:, None].astype(np.float32) * inv\n"
        "    c, s = np.cos(ang), np.sin(ang)\n"
        "    x1, x2 = x[:, : d // 2], x[:, d // 2 :]\n"
        "    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)\n")
    main(["precision", f"{p}:rope", "--max-position", "65536"])
    sampled = capsys.readouterr().out
    main(["precision", f"{p}:rope", "--max-position", "65536", "--exhaustive"])
    every = capsys.readouterr().out
    for text in (sampled, every):
        line = next(x for x in text.splitlines() if x.startswith("bfloat16 angles"))
        assert "holds up to p = " in line and "beyond which it promises nothing" in line, line


def test_exhaustive_names_the_exact_first_failing_position(tmp_path, capsys):
    """fp16_positions rounds positions to float16, exact up to 2048: position 2049 is the first one off
    (it becomes 2048), and the exhaustive sweep says exactly that, not a sampled estimate."""
    js = tmp_path / "ex.json"
    code = main(["precision", "ropespec.implementations.zoo.rope.fp16_positions:make", "--exhaustive", "--max-position", "4096",
                 "--chunk", "1000", "--expect", '{"max_position": 4096}', "--json", str(js)])
    text = capsys.readouterr().out
    assert code == 1, text
    assert text.strip().splitlines()[-1].endswith("fails from p = 2049 (the first position where it does): exit 1")
    data = json.loads(js.read_text())
    assert data["positions"] == 4096 and data["reference"] == "ropespec.reference.fast"
    assert data["first_failure"]["float32"] == 2049, data["first_failure"]
    assert data["worst"]["float32"]["ratio"] > 1 and data["worst"]["float16"]["ratio"] <= 1
    assert "float32 angles (declared): first fails at p = 2049" in text
    assert "float16 angles: holds up to p = " in text and "beyond which it promises nothing" in text


@pytest.mark.parametrize("args, field", [
    (["--exhaustive", "--max-position", str(2**28)], "--max-position"),
    (["--exhaustive", "--max-position", "64", "--chunk", "0"], "--chunk"),
    (["--exhaustive", "--max-position", "64", "--plot", "x.png"], "--plot"),
])
def test_exhaustive_bad_usage_is_one_line(capsys, args, field):
    assert main(["precision", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0], err


def _partial_fp16_positions(x, p):
    """A partial-rotary float32 RoPE with float16 positions (exact to 2048) that also nudges a pass-through
    dim from p = 3000 on: a class failure, then a pass-through failure, at known positions."""
    from ropespec.implementations.zoo.rope.fp16_positions import make

    e = Expect(head_dim=64, rotary_dim=48, dtype="float32", max_position=4096)
    y = np.asarray(make(e.replace(head_dim=48, rotary_dim=48))(x[:, :48].astype(np.float32), p), dtype=np.float64)
    out = x.copy()
    out[:, :48] = y
    out[:, 60] += 1e-3 * (p >= 3000)
    return out


def test_the_exhaustive_comparison_in_torch_is_the_numpy_one():
    """The comparison that runs on a GPU (--array torch --device cuda) is the numpy one written in torch:
    run here on torch's CPU device, every figure equals numpy's (first failure per class, worst ratio and
    its position, largest error), on a function whose classes fail at different positions."""
    pytest.importorskip("torch")
    e = Expect(head_dim=64, rotary_dim=48, dtype="float32", max_position=4096)
    on_numpy = exhaustive(_partial_fp16_positions, e, 4096, chunk=1500).to_json()
    on_torch = exhaustive(_partial_fp16_positions, e, 4096, chunk=1500, device="cpu").to_json()
    assert on_numpy["first_failure"]["float32"] == 2049 and on_numpy["first_failure"]["float16"] == 3000
    assert on_torch["first_failure"] == on_numpy["first_failure"]
    for c, w in on_numpy["worst"].items():
        assert on_torch["worst"][c]["position"] == w["position"], c
        assert on_torch["worst"][c]["ratio"] == pytest.approx(w["ratio"], rel=1e-12), c
    assert on_torch["max_error"] == pytest.approx(on_numpy["max_error"], rel=1e-12)


def test_exhaustive_on_cuda_without_cuda_is_one_line_exit_2(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the comparison runs there")
    code = main(["precision", "ropespec.implementations.torch_rope:make", "--array", "torch", "--device", "cuda",
                 "--exhaustive", "--max-position", "4096"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "CUDA is not available" in err[0], err


def test_a_wrong_frequency_table_is_said_to_be_no_rounding_and_check_names_it(tmp_path, capsys):
    """README's my_rope.py (base 500000) without --expect is measured against theta 1e4: the error is gross from
    the first positions. precision says after its verdict what the error is from, with check's own evidence
    (base), that the expectation was the default one, and which command names it."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (tmp_path / "my_rope.py").write_text(re.search(r"```python\n(# my_rope\.py.*?)```", readme, re.S)[1])
    code = main(["precision", f"{tmp_path / 'my_rope.py'}:apply", "--max-position", "65536"])
    out = capsys.readouterr().out
    assert code == 1, out
    last = out.strip().splitlines()[-1]
    assert last.startswith("the error is not rounding: [base]") and "500000" in last, last
    assert "without --expect precision assumes head_dim 128, theta 10000" in last, last
    assert f"ropespec check {tmp_path / 'my_rope.py'}:apply names every fault" in last, last


def test_rounding_gets_no_such_sentence(capsys):
    """A float32-angle implementation failing the strict class is rounding: nothing more is said."""
    code = main(["precision", "ropespec.implementations.zoo.rope.float32_angles:make", "--max-position", "65536",
                 "--expect", '{"head_dim": 64, "angle_dtype": "exact", "inv_freq_dtype": "exact"}'])
    out = capsys.readouterr().out
    assert code == 1 and "not rounding" not in out, out[-800:]


def test_the_plot_keeps_its_legend_off_the_curves_and_says_what_the_text_says():
    """The legend sits outside the axes (it covers no point of any curve); bounds that coincide are one line named
    for both; each label is the text report's sentence; a first failure's marker says which classes fail there."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from ropespec.plots import precision_plot
    from ropespec.report import class_sentence

    e = Expect(head_dim=64, max_position=1 << 16)
    from ropespec.implementations import load_implementation

    impl = load_implementation("ropespec.implementations.zoo.rope.float32_angles:make", expect=e)
    try:
        sw = precision.measure(impl.as_rope(e), e, precision.sweep_positions(e.max_position, per_octave=1), vectors=2)
    finally:
        impl.close()
    fig = precision_plot(sw, "/dev/null", "t", keep=True)
    try:
        fig.canvas.draw()
        [ax], [legend] = fig.axes, fig.legends
        assert not legend.get_window_extent().overlaps(ax.get_window_extent())
        labels = [t.get_text() for t in legend.get_texts()]
        assert any("strict float32" in t and "float64 angles" in t and "coincide" in t for t in labels), labels
        for c in ("float32", "bfloat16"):
            assert any(class_sentence(sw, c, short=True) in t for t in labels), (c, labels)
        notes = [t.get_text() for t in ax.texts]
        assert any(re.fullmatch(r".*: (fails|noise) from p = \d+", t) for t in notes), notes
        for note in notes:  # each mark says, for each class it names, what that class's sentence says
            classes, words = note.split(": ", 1)
            for c in classes.split(", "):
                assert words in class_sentence(sw, "exact" if c == "strict" else c), (note, c)
    finally:
        plt.close(fig)


def test_a_users_own_tolerance_is_swept_as_torch_testing_takes_it(cli):
    """--atol/--rtol (torch.testing.assert_close's): where the output first leaves the user's tolerance, which then
    decides the exit code. float32 angles hold the default class to 2^20 yet leave torch's float32 tolerance (1e-5,
    1.3e-6) from p = 129; exact angles hold it; the two are given together, and not with --exhaustive."""
    argv = ["precision", "ropespec.implementations.zoo.rope.float32_angles:make", "--dtype", "float32",
            "--max-position", "1048576", "--atol", "1e-5", "--rtol", "1.3e-6"]
    code, out, err = cli(*argv)
    assert code == 1 and "the declared class (float32 output, angles in float32, inv_freq in float32) held at every " \
        "swept position below max_position 1048576\n" in out, out
    assert "your tolerance, atol 1e-05, rtol 1.3e-06 (torch.testing.assert_close's |actual - expected| <= atol + rtol " \
        "|expected|): first exceeded at p = 129, held to p = 91" in out and out.rstrip().endswith("exit 1"), out
    code, out, err = cli("precision", "--max-position", "65536", "--atol", "1e-5", "--rtol", "1.3e-6")
    assert code == 0 and "held at every swept position, to p = 65535" in out, out
    code, out, err = cli("precision", "--atol", "1e-5")
    assert code == 2 and "--atol and --rtol: give both" in err, err
    code, out, err = cli("precision", "--atol", "1e-5", "--rtol", "-1")
    assert code == 2 and "must be finite numbers >= 0" in err, err
    code, out, err = cli("precision", "--atol", "1e-5", "--rtol", "0", "--exhaustive")
    assert code == 2 and "drop them with --exhaustive" in err, err


GPTJ = '''
import numpy as np


def rope(x, positions):
    """GPT-J's RoPE as ordinary float32 code: interleaved pairs, theta 10000, angles formed in float32."""
    d = x.shape[1]
    inv = (1.0 / 10000.0 ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d))).astype(np.float32)
    ang = np.asarray(positions).astype(np.float32)[:, None] * inv[None, :]
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2], out[:, 1::2] = a * c - b * s, a * s + b * c
    return out.astype(x.dtype)
'''


def test_the_verdict_is_about_the_positions_the_model_uses(tmp_path, capsys):
    """Ordinary float32 code exited 1 for noise at p = 47453133 of a model of 131072 positions: the verdict is about
    the positions below max_position, the sweep past them information; "holds to the end of the sweep" is told from
    "stops holding at p" (--max-position 131072 said "holds up to p ~ 1.3e+05", the sweep's end read as a limit);
    and the plot's marks say the text's number and word ("fail from p = 47453133" where the text said it holds to
    5.9e6)."""
    pytest.importorskip("matplotlib")
    (tmp_path / "gptj_rope.py").write_text(GPTJ)
    target = f"{tmp_path / 'gptj_rope.py'}:rope"
    expect = '{"head_dim": 64, "rope_theta": 10000, "convention": "interleaved"}'
    png = tmp_path / "p.png"
    code = main(["precision", target, "--expect", expect, "--plot", str(png)])
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert code == 0 and lines[-1].endswith("held at every swept position below max_position 131072: exit 0"), out
    assert "beyond max_position 131072: measured for information, not the verdict" in out
    noise = re.search(r"float32 angles \(declared\) holds up to p ~ 5\.9e\+06, beyond which it promises nothing \(its "
                      r"bound reaches twice the pair norm\); the output is (noise from p = \d+)", out)
    assert noise and f"(information, not the verdict): its output is {noise[1]}" in lines[-2], out[-1500:]
    code = main(["precision", target, "--expect", expect, "--max-position", "131072", "--sweep-to", "131072"])
    out = capsys.readouterr().out
    assert code == 0 and "1.3e+05" not in out, out[-1500:]
    assert "float32 angles (declared) holds at every swept position, to the end of the sweep (p = 131071)" in out
    assert re.search(r"strict float32 holds up to p = \d+ and fails from p = \d+\n", out), out[-1500:]
    code = main(["precision", target, "--expect", expect[:-1] + ', "max_position": 2147483648}'])
    out = capsys.readouterr().out
    assert code == 1 and f"the output is {noise[1]} (an error of the pair norm or more): exit 1" in out, out[-600:]
