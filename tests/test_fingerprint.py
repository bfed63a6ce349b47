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
