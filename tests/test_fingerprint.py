"""`ropespec fingerprint` recovers what an implementation computes from probing alone."""

import json

import numpy as np
import pytest

from ropespec import reference
from ropespec.cli import main
from ropespec.spec import presets

PRESETS = presets.rotary()


def _aliased(name: str) -> bool:
    """Whether a preset turns some pair by more than pi per position (LTX-Video's ascending ladders at its base grid's
    coordinates): at integer positions a rate w and w - 2 pi k give the same outputs, so no probe tells them apart."""
    return float(np.max(reference.rates(presets.get(name)))) > np.pi


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.skipif(
    _aliased(n), reason="a rate above pi per position is not identifiable from outputs at integer positions"))
    for n in PRESETS])
def test_fingerprint_recovers_every_preset_from_the_numpy_implementation(tmp_path, capsys, name):
    out = tmp_path / "fp.json"
    assert main(["fingerprint", "ropespec.implementations.numpy_rope:make", "--expect", name, "--dtype", "float64",
                 "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    e = presets.get(name)
    assert fp["convention"] == e.convention and fp["rotary_dim"] == e.rotary_dim
    assert abs(fp["base"] - e.rope_theta) <= 1e-6 * e.rope_theta
    if e.rope_scaling is None:
        assert fp["curve"] == "ntk-or-default" and fp["scaling"] is None
    else:
        assert fp["curve"] == e.rope_type
        assert fp["scaling"]["factor"] == pytest.approx(e.rope_scaling["factor"], rel=1e-6)
    assert name in fp["presets"]  # llama2-7b and mistral-7b-v0.1 share one RoPE, and so on
    assert name in capsys.readouterr().out
    assert fp["precision_class"] == "exact"  # the shipped float64 implementation holds the strict class


@pytest.mark.parametrize("member, key, value", [
    ("backwards", "direction", "reverse"),
    ("off_by_one", "offset", 1.0),
    ("wrong_pairing", "convention", "interleaved"),
    ("partial_ignored", "rotary_dim", 64),
    ("wrong_base", "base", 500000.0),
])
def test_fingerprint_of_zoo_members(tmp_path, member, key, value):
    out = tmp_path / "fp.json"
    assert main(["fingerprint", f"ropespec.implementations.zoo.rope.{member}:make", "--expect",
                 '{"head_dim": 64, "rotary_dim": 48, "dtype": "float64"}' if member == "partial_ignored"
                 else '{"head_dim": 64, "dtype": "float64"}', "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    assert fp[key] == pytest.approx(value) if isinstance(value, float) else fp[key] == value


@pytest.mark.parametrize("head_dim, p, convention", [(128, 0.25, "half"), (256, 0.5, "half"), (64, 0.25, "rope_interleave")])
def test_proportional_rope_reads_as_its_still_pairs_not_as_a_narrow_rotary_dim(tmp_path, capsys, head_dim, p, convention):
    """Proportional RoPE turns the first pairs of the whole head and leaves the rest still: its turning pairs are
    no convention over 2k dims, and its ladder is over the whole head (base 10000, not 10000^(2k/d))."""
    e = {"head_dim": head_dim, "convention": convention,
         "rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": p}}
    out = tmp_path / "fp.json"
    assert main(["fingerprint", "ropespec.implementations.numpy_rope:make", "--expect", json.dumps(e), "--dtype",
                 "float64", "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    k = int(p * head_dim // 2)
    assert (fp["convention"], fp["rotary_dim"], fp["turning"]) == (convention, head_dim, k)
    assert fp["base"] == 10000.0 and fp["curve"] == "proportional"
    assert fp["scaling"] == {"rope_type": "proportional", "partial_rotary_factor": p, "factor": 1.0}
    assert f"{k} of its {head_dim // 2} pairs turn" in capsys.readouterr().out


def test_fingerprint_of_a_dynamic_table(tmp_path):
    out = tmp_path / "fp.json"
    e = '{"head_dim": 64, "dtype": "float64", "max_position": 16384, "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}}'
    assert main(["fingerprint", "ropespec.implementations.numpy_rope:make", "--expect", e, "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    assert fp["length_dependent"] and fp["curve"] == "dynamic"
    assert fp["scaling"]["factor"] == pytest.approx(4.0, rel=1e-6)
    assert fp["scaling"]["original_max_position_embeddings"] == 2048


def test_non_finite_output_is_named_not_blamed_on_the_expectation(capsys, tmp_path):
    from ropespec.cli import main

    p = tmp_path / "nan_out.py"
    p.write_text("import numpy as np\ndef rope(x, positions):\n    return np.full_like(x, np.nan)\n")
    code = main(["fingerprint", f"{p}:rope"])
    out, err = capsys.readouterr()
    assert code == 1 and "[non-finite]" in out and "nothing to fingerprint" in out and not err


def test_decode_mode_factory_is_fingerprinted_through_prefill(capsys):
    from ropespec.cli import main

    code = main(["fingerprint", "ropespec.implementations.numpy_decode:make", "--expect", '{"head_dim": 16}', "--dtype", "float64"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "convention: half; rotary dim 16 of 16" in out and "base: 10000" in out


def test_float32_ntk_code_is_the_default_ladder_of_its_base_in_the_float32_class(tmp_path):
    """Its frequencies carry float32 rounding: a yarn of factor 1.000001 fitted that rounding a little
    closer and was reported, and the class was judged against the base rounded to 6 digits (bfloat16)."""
    out = tmp_path / "fp.json"
    e = '{"head_dim": 128, "rope_theta": 10000, "max_position": 32768, "rope_scaling": {"rope_type": "ntk", "factor": 4.0}}'
    assert main(["fingerprint", "ropespec.implementations.numpy_rope:make", "--expect", e, "--dtype", "float32", "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    assert fp["curve"] == "ntk-or-default" and fp["scaling"] is None
    assert abs(fp["base"] - 10000 * 4 ** (128 / 126)) <= 1e-6 * fp["base"]
    assert fp["precision_class"] == "float32"


def test_longrope_is_recognised_with_its_switch_length_and_factors(tmp_path):
    out = tmp_path / "fp.json"
    short = [round(1.0 + 0.02 * i, 6) for i in range(32)]
    long = [round(1.0 + 0.9 * i, 6) for i in range(32)]
    e = json.dumps({"head_dim": 64, "max_position": 32768, "rope_scaling": {
        "rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 8.0,
        "short_factor": short, "long_factor": long}})
    assert main(["fingerprint", "ropespec.implementations.numpy_rope:make", "--expect", e, "--dtype", "float64", "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    assert fp["curve"] == "longrope" and fp["base"] == 10000.0
    s = fp["scaling"]
    assert s["original_max_position_embeddings"] == 4096
    assert s["short_factor"] == pytest.approx(short, rel=1e-7) and s["long_factor"] == pytest.approx(long, rel=1e-7)
    import math

    assert s["attention_factor"] == pytest.approx(math.sqrt(1 + math.log(8.0) / math.log(4096)), rel=1e-7)


LLAMA4 = '''
from ropespec.implementations.numpy_rope import make
from ropespec.spec.expectation import Expect

_f = make(Expect(head_dim=88, convention="interleaved", axes_dims_rope=[44, 44], dtype="float32", max_position=26,
                 angle_dtype="exact", inv_freq_dtype="exact"))


def patches_from_one(x, positions):
    """Llama 4 vision's rotary: each patch turned by its column and row plus 1."""
    return _f(x, positions + 1)


def patches_from_zero(x, positions):
    """The same grid counted from 0: not Llama 4's."""
    return _f(x, positions)
'''


def test_an_axis_offset_is_measured_matched_and_named(tmp_path, capsys):
    """The fingerprint reads Llama 4's offset of 1 per axis and matches the llama-4-vision preset only with it; the
    grid counted from 0 matches no preset, and check names it position-offset (every axis shifted alike)."""
    from ropespec import check
    from ropespec.cli import main

    (tmp_path / "l4.py").write_text(LLAMA4)
    import json

    assert main(["fingerprint", f"{tmp_path / 'l4.py'}:patches_from_one", "--expect", "llama-4-vision", "--json",
                 str(tmp_path / "fp.json")]) == 0
    out = capsys.readouterr().out
    assert "matches preset llama-4-vision" in out and "coordinates (p + 1) on every axis;" in out, out
    assert json.loads((tmp_path / "fp.json").read_text())["expect"]["axes_offset"] == [1, 1]
    assert main(["fingerprint", f"{tmp_path / 'l4.py'}:patches_from_zero", "--expect", "llama-4-vision"]) == 0
    assert "matches no preset" in capsys.readouterr().out
    r = check(f"{tmp_path / 'l4.py'}:patches_from_zero", "llama-4-vision", seed=0, invariants=["rope.conformance"])
    assert {x.diagnosis for x in r.results if x.status == "fail"} == {"position-offset"}, r.report()


@pytest.mark.parametrize("interleaved", [False, True])
def test_an_ascending_ladder_is_read_as_its_rule(tmp_path, capsys, interleaved):
    """LTX-Video's rule, theta^(k/(K - 1)) per axis (at coordinates whose rates stay below pi per position, where the
    outputs identify them): read as ascending ladders of base theta with the axes' scale, not as no ladder at all."""
    e = {"head_dim": 48, "rope_theta": 100.0, "axes_dims_rope": [16, 16, 16], "axes_ladder": "ascending",
         "axes_scale": [0.01, 0.02, 0.02], "axes_interleaved": interleaved, "max_position": 256}
    out = tmp_path / "fp.json"
    assert main(["fingerprint", "ropespec.implementations.numpy_rope:make", "--expect", json.dumps(e), "--dtype",
                 "float64", "--json", str(out)]) == 0
    fp = json.loads(out.read_text())
    assert fp["axes"]["axes_ladder"] == "ascending" and fp["base"] == pytest.approx(100.0, rel=1e-9)
    assert fp["axes"]["axes_scale"] == pytest.approx([0.01, 0.02, 0.02], rel=1e-6)
    assert "ascending ladders theta^(k/(K - 1))" in capsys.readouterr().out


from ropespec.spec.expectation import Expect  # noqa: E402 (the expectations the tests below read back)

#: plain functions, each one model's RoPE (the shipped numpy factory bound to one expectation, which the fingerprint is
#: not told): every way of reading a model the fingerprint has, a scaling curve, sections, ladders, coordinates, the
#: first dim that turns; and one whose table is formed in float32 (its base and scales measured a little off)
MODELS = '''
import math

import numpy as np

from ropespec.implementations.numpy_rope import make
from ropespec.spec import presets
from ropespec.spec.expectation import Expect

llama2 = make(presets.get("llama2-7b"))
llama3 = make(presets.get("llama3.1-8b"))
yarn = make(presets.get("qwen2.5-7b-yarn"))
dynamic = make(Expect(head_dim=64, max_position=16384,
                      rope_scaling={"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}))
partial = make(Expect(head_dim=64, partial_rotary_factor=0.5, rope_theta=500000.0, max_position=8192))
interleaved = make(Expect(head_dim=64, convention="interleaved", max_position=8192))
reverse = make(Expect(head_dim=64, direction="reverse", max_position=8192))
qwen2_vl = make(presets.get("qwen2-vl-7b"))
flux = make(presets.get("flux.1-dev"))
dinov3 = make(presets.get("dinov3-vitl16"))
llama4_vision = make(presets.get("llama-4-vision"))
ltx_like = make(Expect(head_dim=50, rotary_start=2, rope_theta=100.0, convention="interleaved",
                       axes_dims_rope=[16, 16, 16], axes_ladder="ascending", axes_interleaved=True,
                       axes_offset=[-100, -100, -100], axes_scale=[math.pi / 200] * 3, max_position=256))


def dinov3_float32(x, positions):
    """DINOv3's rotary as its code forms it, in float32: patch centres (i + 0.5)/H in [-1, 1] times 2 pi, and periods
    100^(2k/(D/2)) on each of its two axes, [h | w] halves of half pairs."""
    H, d = 14, 64
    coords = (2 * ((positions.astype(np.float32) + np.float32(0.5)) / np.float32(H)) - 1) * np.float32(2 * math.pi)
    inv = (np.float32(1) / np.float32(100) ** (np.arange(16, dtype=np.float32) / np.float32(16))).astype(np.float32)
    ang = np.concatenate([coords[:, :1] * inv, coords[:, 1:] * inv], axis=1).astype(np.float32)
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : d // 2].astype(np.float32), x[:, d // 2 :].astype(np.float32)
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)
'''

#: what the fingerprint is told of each: head_dim, max_position and, for a multi-axis RoPE, how many axes (any sizes)
TOLD = {
    "llama2": {"head_dim": 128, "max_position": 4096},
    "llama3": {"head_dim": 128},
    "yarn": {"head_dim": 128},
    "dynamic": {"head_dim": 64, "max_position": 16384},
    "partial": {"head_dim": 64, "max_position": 8192},
    "interleaved": {"head_dim": 64, "max_position": 8192},
    "reverse": {"head_dim": 64, "max_position": 8192},
    "qwen2_vl": {"head_dim": 128, "max_position": 32768, "axes_dims_rope": [42, 42, 44]},
    "flux": {"head_dim": 128, "max_position": 4096, "axes_dims_rope": [42, 42, 44]},
    "dinov3": {"head_dim": 64, "max_position": 14, "axes_dims_rope": [32, 32]},
    "dinov3_float32": {"head_dim": 64, "max_position": 14, "axes_dims_rope": [32, 32]},
    "llama4_vision": {"head_dim": 88, "max_position": 26, "axes_dims_rope": [44, 44]},
    "ltx_like": {"head_dim": 50, "max_position": 256, "axes_dims_rope": [16, 16, 18]},
}
#: one of each way of reading a model in the fast tier; the others in the slow one
FAST_MODELS = ("llama3", "reverse", "qwen2_vl", "dinov3_float32", "ltx_like")


def _reproduced(cli, target: str, told: dict, *extra) -> tuple[dict | None, str, str]:
    """(the fingerprint's expectation, its JSON's reason where it has none, the printed reproduction line)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/fp.json"
        code, printed, err = cli("fingerprint", target, "--expect", json.dumps(told), *extra, "--json", out)
        assert code == 0, printed + err
        fp = json.loads(open(out).read())
    line = printed.rstrip().splitlines()[-1].strip()
    return fp["expect"], fp["no_expect"], line


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST_MODELS else pytest.mark.slow) for n in TOLD])
def test_the_printed_expectation_reproduces_the_fingerprinted_model(tmp_path, cli, checked, name):
    """Every fingerprint that reads a model ends with the --expect that reproduces it, coordinates, offsets, scales and
    the first dim that turns included, and check under it holds on the fingerprinted code, which was told only its
    head_dim, probe range and number of axes."""
    (tmp_path / "models.py").write_text(MODELS)
    target = f"{tmp_path / 'models.py'}:{name}"
    expect, why, line = _reproduced(cli, target, TOLD[name])
    assert expect is not None, why
    assert line == f"reproduced by --expect '{Expect.from_dict(expect).to_json()}'", line
    multi = "mrope_section" in expect or "axes_dims_rope" in expect
    r = checked(target, expect, seed=0, profile="dev",
                invariants=["rope.conformance"] + (["axes.one-axis"] if multi else []))
    assert r.passed, r.report()


def test_the_expectation_is_rounded_to_what_the_measurement_cannot_tell_apart(tmp_path, cli):
    """DINOv3's float32 table measures base 100 and scale 4 pi/14 a little off (float32's rounding): the expectation
    states the simplest values whose rates every pair's is within its class's rounding of, and the ones check holds
    it against; the offset is the centres' 0.5 - 7."""
    (tmp_path / "models.py").write_text(MODELS)
    expect, _, _ = _reproduced(cli, f"{tmp_path / 'models.py'}:dinov3_float32", TOLD["dinov3_float32"])
    assert expect["rope_theta"] == 100.0 and expect["axes_scale"] == [4 * np.pi / 14] * 2
    assert expect["axes_offset"] == [-6.5, -6.5] and expect["axes_dims_rope"] == [32, 32]
    expect, _, _ = _reproduced(cli, f"{tmp_path / 'models.py'}:ltx_like", TOLD["ltx_like"])
    assert (expect["rotary_start"], expect["rotary_dim"], expect["axes_ladder"]) == (2, 48, "ascending")
    assert expect["axes_scale"] == [np.pi / 200] * 3 and expect["axes_offset"] == [-100] * 3


@pytest.mark.parametrize("target, told, says", [
    ("ropespec.implementations.zoo.rope.off_by_one:make", {"head_dim": 64, "dtype": "float64"},
     "at the first position its pairs are already turned (a position offset of 1), which no field of a 1-D expectation "
     "states"),
    ("ropespec.implementations.zoo.rope.axes_ladder_head_dim:make",
     {"head_dim": 24, "convention": "interleaved", "axes_dims_rope": [4, 8, 12]},
     "each axis's ladder is normalised by head_dim 24, theta^(-2k/24)"),
    ("ropespec.implementations.numpy_rope:make", "ltx_video_48.json",
     "its pairs' axes [8, 8, 8] and frequencies fit no way of dealing pairs to axes"),
])
def test_no_expectation_is_printed_where_part_of_the_model_is_not_read(cli, target, told, says):
    """A position offset of 1-D RoPE and per-axis ladders normalised by head_dim are read but stated by no expectation;
    LTX-Video's rates above pi per position read as themselves less 2 pi k, which no ladder fits: the fingerprint says
    so and why, and prints no partial expectation."""
    if told == "ltx_video_48.json":  # LTX-Video's base grid: its fastest pairs turn by up to 15 rad per position
        from pathlib import Path

        told = json.loads((Path(__file__).parents[1] / "examples" / told).read_text())
    expect, why, line = _reproduced(cli, target, told)
    assert expect is None and says in why, why
    assert line == f"no expectation reproduces it: {why}"


#: the real libraries' code, fingerprinted with the expectation their adapters take, then checked under the printed one
REAL = [
    ("ropespec.implementations.torch_rope:make", "llama3.1-8b"),
    ("ropespec.implementations.adapters.hf_axes:dinov3", "dinov3-vitl16"),
    ("ropespec.implementations.adapters.hf_axes:qwen2_vl", "qwen2-vl-7b"),
    ("ropespec.implementations.adapters.diffusers:flux", "flux.1-dev"),
    ("ropespec.implementations.adapters.diffusers:ltx_video", {
        "head_dim": 50, "rotary_start": 2, "rope_theta": 100.0, "convention": "interleaved",
        "axes_dims_rope": [16, 16, 16], "axes_ladder": "ascending", "axes_interleaved": True,
        "axes_offset": [-100, -100, -100], "axes_scale": [np.pi / 200] * 3, "max_position": 256}),
]


@pytest.mark.slow
@pytest.mark.parametrize("target, told", REAL, ids=[t.rpartition(":")[2] for t, _ in REAL])
def test_the_printed_expectation_reproduces_real_code(cli, checked, target, told):
    """transformers' DINOv3 and Qwen2-VL rotaries, diffusers' FLUX and LTX-Video position embeddings (LTX-Video on a
    base grid whose rates stay below pi per position) and the shipped torch RoPE: check holds under the printed
    expectation, and the presets' values are the ones stated (DINOv3's coordinates read exactly)."""
    pytest.importorskip("torch")
    told = presets.get(told).to_dict() if isinstance(told, str) else told
    expect, why, line = _reproduced(cli, target, told, "--array", "torch")
    assert expect is not None, why
    got, want = Expect.from_dict(expect), Expect.from_dict(told)
    for key in ("rope_theta", "convention", "rotary_dim", "rotary_start", "direction", "rope_scaling", "mrope_section",
                "axes_dims_rope", "axes_ladder", "axes_interleaved", "axes_offset", "axes_scale"):
        a, b = getattr(got, key), getattr(want, key)
        assert a == (pytest.approx(b, rel=1e-12) if key in ("rope_theta", "axes_offset", "axes_scale") and b else b), \
            (key, expect)
    multi = "mrope_section" in expect or "axes_dims_rope" in expect
    r = checked(target, expect, array="torch", seed=0, profile="dev",
                invariants=["rope.conformance"] + (["axes.one-axis"] if multi else []))
    assert r.passed, r.report()
