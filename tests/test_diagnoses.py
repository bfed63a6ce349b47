"""The word a failure carries names its cause, whatever the dtype, and one root cause gets one word.

Precision is named as precision (a rounding's signature, not one operation order;
the same word in bfloat16 as in float32), a structural fault as the root of every failure it causes
("follows from <word>"), the report leading with it, and decode evidence that tells the tables apart.
"""

from __future__ import annotations

import json
import re
import numpy as np
import pytest

from ropespec.implementations.zoo import members
from ropespec.properties.framework import all_properties, PROPERTIES
from ropespec import check
from ropespec.cli import main
from ropespec.spec import Expect, presets

all_properties()

BF16_ANGLES = '''
import numpy as np
from ropespec.spec.dtypes import round_to


def rope(x, positions):
    """Angles p theta formed exactly, then rounded to bfloat16 (a cos/sin kernel fed bf16 angles)."""
    d = x.shape[1]
    th = 10000.0 ** (-np.arange(0, d, 2) / d)
    phi = round_to(np.asarray(positions, dtype=np.float64)[:, None] * th[None], "bfloat16")
    c, s = np.cos(phi), np.sin(phi)
    a, b = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(x.dtype)
'''


def _failed(result):
    return [r for r in result.reports[0].results if r.status == "fail"]


def test_angles_rounded_to_bfloat16_after_an_exact_product_are_angle_precision(tmp_path):
    """No operation order of the candidates reproduces it (they round the position and the frequency
    first); the error's signature, at most ~u_bf16 |p theta| per pair with the norms kept, does."""
    (tmp_path / "bf16.py").write_text(BF16_ANGLES)
    result = check(f"{tmp_path / 'bf16.py'}:rope", expect={"head_dim": 64, "max_position": 65536},
                   invariants=["rope.conformance"], seed=0)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"angle-precision"}, [(r.diagnosis, r.message) for r in failed]
    assert "u of bfloat16" in failed[0].message


MISSING_SCALING = '''
from ropespec.implementations.torch_rope import make
from ropespec.spec import presets

_f = make(presets.get("llama3.1-8b").replace(rope_scaling=None, dtype="{dtype}"))


def rope(x, positions):
    return _f(x, positions)
'''


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_missing_scaling_is_scaling_in_every_dtype(tmp_path, dtype):
    """In bfloat16 an angle read off the output is off by ~u_bf16, so the low frequencies are measured
    coarsely; that is the measurement's precision, not a sign that the angles do not grow linearly."""
    pytest.importorskip("torch")
    (tmp_path / "unscaled.py").write_text(MISSING_SCALING.replace("{dtype}", dtype))
    result = check(f"{tmp_path / 'unscaled.py'}:rope", expect="llama3.1-8b", array="torch", dtype=dtype,
                   invariants=["rope.conformance"], seed=0)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"scaling"}, [(r.diagnosis, r.message[-300:]) for r in failed]
    assert "unscaled default table" in failed[0].message


PAIRED = '''
from ropespec.implementations.numpy_rope import make
from ropespec.spec import Expect

_f = make(Expect(head_dim=32, convention="{convention}", max_position=4096))


def rope(x, positions):
    return _f(x, positions)
'''


@pytest.mark.parametrize("convention", ["interleaved", "rope_interleave"])
def test_another_pairing_is_convention_and_nothing_else(tmp_path, convention):
    """Before, an interleaved function checked as half also got attention-factor (the norm read along the
    wrong pairs, 0.95), and the rope_interleave layout got not-a-rotation, attention-factor and scaling."""
    (tmp_path / "paired.py").write_text(PAIRED.replace("{convention}", convention))
    result = check(f"{tmp_path / 'paired.py'}:rope", expect={"head_dim": 32, "max_position": 4096}, seed=0)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"convention"}, [(r.property, r.diagnosis) for r in failed]
    assert any("follows from convention" in r.message for r in failed)  # e.g. scaling.attention-factor
    if convention == "rope_interleave":
        assert "interleaved pairs (2i, 2i + 1) written to (i, i + r/2)" in failed[0].message


def test_the_report_leads_with_the_root_cause(capsys):
    code = main(["check", "ropespec.implementations.zoo.rope.writes_half_layout:make", "--expect",
                 '{"head_dim": 64, "convention": "interleaved", "max_position": 8192}', "--seed", "0"])
    out = capsys.readouterr().out
    assert code == 1
    listing = out[out.index("failing:"):]
    assert "ropespec.implementations.zoo.rope.writes_half_layout:make: root cause layout" in listing.splitlines()[1]


def test_stale_cache_evidence_names_a_row_whose_rotation_changed(checked):
    """'rows 0..0' was vacuous: row 0 sits at p = 0, where every table gives the identity (the run is the session's:
    tests/test_zoo.py's of the same member and property)."""
    [member] = [m for m in members() if m.name == "decode_stale_cache"]
    _, r = checked.zoo(member, PROPERTIES["consistency"])
    assert r.status == "fail" and r.diagnosis == "scaling"
    import re

    m = re.search(r"row (\d+) \(p = (\d+)\) has the table of length (\d+), not of length (\d+)", r.message)
    assert m, r.message
    row, p, then, now = map(int, m.groups())
    assert p >= 1 and then < now


def test_float32_frequencies_under_the_strict_class_are_precision_in_the_scaling_properties():
    """transformers forms its llama3 table in float32; checked against the strict class, scaling.band-edges
    said 'scaling' (theta'[pair 1]=0.8146172055 ... should be 0.8146172338, unchanged)."""
    pytest.importorskip("transformers")
    e = presets.get("llama3.1-8b").replace(angle_dtype="exact", inv_freq_dtype="exact")
    result = check("ropespec.implementations.adapters.hf:llama", expect=e, array="torch",
                   invariants=["scaling.band-edges", "scaling.bounded"], seed=0)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"angle-precision"}, [(r.diagnosis, r.message) for r in failed]
    assert "float32 class allows" in failed[0].message


def test_a_real_scaling_bug_stays_scaling_under_the_strict_class():
    """The float32 allowance is small: a table off by the scaling factor is still named scaling."""
    [member] = [m for m in members() if m.name == "llama3_unscaled"]
    e = Expect(head_dim=64, dtype="float64", max_position=65536, angle_dtype="exact", inv_freq_dtype="exact",
               rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192})
    result = check(member.target, expect=e, invariants=["scaling.band-edges"], seed=0)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"scaling"}
    assert np.isfinite(failed[0].worst if failed[0].worst is not None else 0.0)


def test_names_are_printed_as_they_are_not_as_emoji(tmp_path, capsys):
    """rich turned 'hf:llama: root cause' into 'hf🦙 root cause'."""
    (tmp_path / "mod.py").write_text("from ropespec.implementations.zoo.rope.writes_half_layout import make as llama\n")
    target = f"{tmp_path / 'mod.py'}:llama"
    code = main(["check", target, "--expect", '{"head_dim": 64, "convention": "interleaved", "max_position": 8192}',
                 "--invariant", "rope.identity-at-zero", "--seed", "0"])
    out = capsys.readouterr().out
    assert code == 1 and f"{target}: root cause layout" in out and "\N{LLAMA}" not in out
    assert check(target, expect={"head_dim": 64, "convention": "interleaved", "max_position": 8192},
                 invariants=["rope.identity-at-zero"], seed=0).report().count(f"{target}: root cause") == 1


def test_a_fixed_size_angle_error_is_not_a_rounding_of_the_angles():
    """Every pair off by the same 1.8e-6 rad whatever its angle: within what bfloat16 rounding would allow
    at the informative entries, but not proportional to the angle, so not precision."""
    from ropespec.properties.precision import explain_low_precision

    e = Expect(head_dim=64, dtype="float32", max_position=4096)
    th = 10000.0 ** (-np.arange(0, 64, 2) / 64)

    def f(x, positions):
        phi = np.asarray(positions, dtype=np.float64)[:, None] * th[None, :] + 1.8e-6
        c, s = np.cos(phi), np.sin(phi)
        a, b = x[:, :32], x[:, 32:]
        return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(np.float32).astype(np.float64)

    assert explain_low_precision(f, e, np.array([1, 3, 5, 33, 257, 999])) is None


def test_the_terminal_table_prints_bracketed_text_as_text():
    """rich read '[layout]' and '[row 1, dim 5]' as markup and deleted them from the table."""
    import io

    from rich.console import Console

    from ropespec import report

    result = check("ropespec.implementations.zoo.rope.writes_half_layout:make", invariants=["rope.identity-at-zero"], seed=0,
                   expect={"head_dim": 64, "convention": "interleaved", "max_position": 8192})
    buf = io.StringIO()
    report.render(result.reports, Console(file=buf, force_terminal=True, width=250, emoji=False, color_system=None),
                  seed=0, profile="dev")
    table, _, failing = buf.getvalue().partition("failing:")
    row = next(line for line in table.splitlines() if "rope.identity-at-zero" in line)
    assert "fail" in row and "layout" in row, table  # the word has a column of its own
    assert "[layout]" in failing and "[row " in failing, failing  # and the detail below keeps its brackets


# -- the frequencies are read before rounding is said: a wrong frequency grows the error like p as a rounded angle does

LADDERS = '''
import math
import numpy as np

def _rotate(x, positions, theta, g=1.0):
    d = x.shape[1]
    ang = positions[:, None].astype(np.float32) * theta.astype(np.float32)
    c, s = np.cos(ang) * g, np.sin(ang) * g
    a, b = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(x.dtype)

def base_10010(x, positions):  # a base off by 0.1%
    d = x.shape[1]
    return _rotate(x, positions, 10010.0 ** (-np.arange(0, d, 2) / d))

def keras_dynamic(x, positions):  # every frequency divided by s^(d/(d-2)) at every length
    d = x.shape[1]
    return _rotate(x, positions, 10000.0 ** (-np.arange(0, d, 2) / d) / 4.0 ** (d / (d - 2)))

def litgpt_yarn(x, positions):  # YaRN's mixing taken the wrong way round: the fast pairs divided by s
    d, s, L, base = x.shape[1], 8.0, 4096, 10000.0
    pos_freqs = base ** (np.arange(0, d, 2) / d)
    corr = lambda rot: (d * math.log(L / (rot * 2 * math.pi))) / (2 * math.log(base))
    low, high = max(math.floor(corr(32)), 0), min(math.ceil(corr(1)), d // 2 - 1)
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
    theta = (1 / (s * pos_freqs)) * (1 - ramp) + (1 / pos_freqs) * ramp
    return _rotate(x, positions, theta, 0.1 * math.log(s) + 1.0)

def wraps_4096(x, positions):  # a 4096-row cache indexed modulo its length
    d = x.shape[1]
    return _rotate(x, positions % 4096, 10000.0 ** (-np.arange(0, d, 2) / d))
'''

_YARN = {"head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}}
_DYNAMIC = {"head_dim": 64, "max_position": 16384,
            "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}}


@pytest.mark.parametrize("name, expect, word, evidence", [
    ("base_10010", {"head_dim": 64}, "base", "fit base 10010"),
    ("keras_dynamic", _DYNAMIC, "scaling", "linear scaling by 4.18"),
    ("litgpt_yarn", _YARN, "scaling", "ramp reversed"),
    ("wraps_4096", {"head_dim": 64}, "position-offset", "wrap modulo 4096"),
])
def test_a_wrong_frequency_is_named_by_its_model_in_every_failing_property(tmp_path, name, expect, word, evidence):
    (tmp_path / "ladders.py").write_text(LADDERS)
    result = check(f"{tmp_path / 'ladders.py'}:{name}", expect=expect, seed=1)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {word}, [(r.property, r.diagnosis, r.message[-200:]) for r in failed]
    assert any(evidence in r.message for r in failed), [r.message[-300:] for r in failed]


def test_the_fingerprint_and_conformance_agree_on_a_wrong_base(tmp_path):
    from ropespec import fingerprint

    (tmp_path / "ladders.py").write_text(LADDERS)
    fp = fingerprint(f"{tmp_path / 'ladders.py'}:base_10010", expect={"head_dim": 64})
    assert round(fp.base) == 10010, fp.base


def test_no_attention_factor_word_where_scaling_attention_factor_holds(tmp_path):
    """A precision or frequency failure is named attention-factor only where the attention factor's own rule fails."""
    (tmp_path / "ladders.py").write_text(LADDERS)
    result = check(f"{tmp_path / 'ladders.py'}:litgpt_yarn", expect=_YARN, seed=2)
    rows = {r.invariant: r for r in result.results}
    assert rows["scaling.attention-factor"].status == "pass", rows["scaling.attention-factor"].message
    assert "attention-factor" not in {r.diagnosis for r in _failed(result)}


TABLE_ENDS = '''
import numpy as np
import torch

_ANG = torch.einsum("i,j->ij", torch.arange(2048).float(), 1.0 / (10000 ** (torch.arange(0, 64, 2) / 64)))

def apply(x, positions):  # GPT-J's sinusoidal table: float32 angles, n_positions rows, rotate_every_two
    sin, cos = (torch.repeat_interleave(t(_ANG[positions]), 2, dim=-1) for t in (torch.sin, torch.cos))
    rot = x[:, :64]
    other = torch.stack((-rot[:, 1::2], rot[:, ::2]), dim=-1).flatten(-2)
    return torch.cat([rot * cos + other * sin, x[:, 64:]], dim=-1)
'''


def test_a_failure_inside_the_range_an_implementation_answers_gets_its_word_there(tmp_path):
    """A table that ends (an IndexError beyond it) stops the probes at max_position; they run again up to the
    failing case's positions, so the backward's strict-class failure is named angle-precision, as rotary code with
    float32 angles is everywhere else."""
    pytest.importorskip("torch")
    (tmp_path / "gptj.py").write_text(TABLE_ENDS)
    expect = {"head_dim": 256, "rotary_dim": 64, "convention": "interleaved", "angle_dtype": "exact",
              "inv_freq_dtype": "exact", "max_position": 16777216}
    result = check(f"{tmp_path / 'gptj.py'}:apply", expect=expect, array="torch", seed=1,
                   invariants=["autograd.inverse-rotation"])
    [r] = result.results
    assert r.status == "fail" and r.diagnosis == "angle-precision", (r.diagnosis, r.message)


@pytest.mark.parametrize("expect", [None, {"head_dim": 64, "convention": "interleaved"}, {"head_dim": 2}])
def test_an_expected_failure_of_a_documented_non_invariant_names_no_fault(expect):
    """The shipped sinusoidal encoding is correct: its documented cross-term leakage is an expected failure with
    its spread as evidence, and no word of a fault (a d = 2 encoding reads the same in both layouts, and positions
    below 65536 are their own residues modulo it: neither is evidence)."""
    result = check("ropespec.implementations.sinusoidal:make", expect=expect, family="sinusoidal", seed=3)
    rows = {r.invariant: r for r in result.results}
    leak = rows["additive.cross-term-leakage"]
    assert leak.status == "xfail" and leak.diagnosis is None and leak.failure.evidence is None, leak.message
    assert rows["sinusoidal.conformance"].status == "pass"


def test_the_public_fingerprint_stays_a_function_after_it_has_run():
    """``from ropespec import fingerprint`` gave the module once a fingerprint had run (the submodule of the same
    name replaced the function on the package)."""
    import ropespec

    ropespec.fingerprint("ropespec.implementations.numpy_rope:make", expect={"head_dim": 8})
    from ropespec import fingerprint

    assert callable(fingerprint), fingerprint


LLAMA3 = '''
import math
import numpy as np
from ropespec.spec.dtypes import round_to

D, FACTOR, L = 128, 8.0, 8192


def _inv(base, low=1.0, high=4.0, reverse=False, dtype=None):
    """transformers' _compute_llama3_parameters, each operation rounded to ``dtype`` where one is given."""
    r = (lambda v: round_to(v, dtype)) if dtype else (lambda v: v)
    inv = r(1.0 / r(base ** r(np.arange(0, D, 2) / D)))
    wl = r(2 * math.pi / inv)
    smooth = r(r(r(L / wl) - low) / (high - low))
    if reverse:
        smooth = 1 - smooth
    mixed = r(r((1 - smooth) * r(inv / FACTOR)) + r(smooth * inv))
    return np.where(wl < L / high, inv, np.where(wl > L / low, r(inv / FACTOR), mixed))


def _rope(inv, table=None):
    def f(x, positions):
        ang = np.asarray(positions, dtype=np.float64)[:, None] * inv[None, :]
        c, s = np.cos(ang), np.sin(ang)
        if table:
            c, s = round_to(c, table), round_to(s, table)
        h = x.shape[1] // 2
        a, b = x[:, :h], x[:, h:]
        return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(x.dtype)
    return f


wrong_base = _rope(_inv(50000.0))
ramp_reversed = _rope(_inv(500000.0, reverse=True))
bands_swapped = _rope(_inv(500000.0, low=4.0, high=1.0))
inv_freq_bf16 = _rope(_inv(500000.0, dtype="bfloat16"))
table_bf16 = _rope(_inv(500000.0), table="bfloat16")
'''


@pytest.mark.parametrize("name, word, says, curve", [
    ("wrong_base", "base", "llama3's table of base 50000", None),
    ("ramp_reversed", "scaling", "llama3 with its ramp reversed", "llama3 with its ramp reversed"),
    ("bands_swapped", "scaling", "low_freq_factor and high_freq_factor swapped", "factor swapped"),
    ("inv_freq_bf16", "angle-precision", "inverse frequencies formed in bfloat16", None),
    ("table_bf16", "angle-precision", "cos/sin tables stored in bfloat16", None),
])
def test_llama3_mistakes_get_the_word_of_the_field_the_measurement_contradicts(tmp_path, capsys, name, word, says,
                                                                                 curve):
    """A wrong base under llama3 said [scaling] with no word of the base; the ramp reversed or the bands swapped said
    [angle-precision] beside an error 2400 times the bound; inverse frequencies in bfloat16 said [scaling]; a table
    cast to bfloat16 said angle-precision in three properties, scaling in two and attention-factor in one. Every
    failing property now carries the word of the one measured model, and the fingerprint reads the same base and
    curve."""
    p = tmp_path / "llama3_rope.py"
    p.write_text(LLAMA3)
    result = check(f"{p}:{name}", "llama3.1-8b", seed=0)
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {word}, [(r.property, r.diagnosis) for r in failed]
    assert all(says in r.message for r in failed), [r.message[-300:] for r in failed if says not in r.message]
    assert main(["fingerprint", f"{p}:{name}", "--expect", "llama3.1-8b"]) == 0
    out = capsys.readouterr().out
    if name == "wrong_base":
        assert "base: 50000 " in out and "curve: llama3 {" in out, out
    if curve:
        assert curve in out, out


OTHER_FIELDS = '''
from ropespec.implementations.numpy_rope import make
from ropespec.spec import presets

_hunyuan_base_ignored = make(presets.get("hunyuan-video").replace(rope_theta=10000.0, dtype="float32",
                                                                    angle_dtype="exact", inv_freq_dtype="exact"))
_global = make(presets.get("llama2-7b").replace(max_position=131072, rope_theta=1e6, dtype="float32",
                                                  rope_scaling={"rope_type": "linear", "factor": 8.0},
                                                  angle_dtype="exact", inv_freq_dtype="exact"))


def base_ignored(x, positions):
    """Per-axis ladders that ignore the configured base (HunYuan-Video's 256) and use 10000: diffusers #10111."""
    return _hunyuan_base_ignored(x, positions)


def sliding_with_global(x, positions):
    """Gemma 3's sliding layers given the global layers' base 1e6 and linear factor 8."""
    return _global(x, positions)
'''


@pytest.mark.parametrize("name, expect, says", [
    ("base_ignored", "hunyuan-video", "the per-axis ladders of base 10000 (every pair to"),
    ("sliding_with_global", {"head_dim": 128, "rope_theta": 10000, "max_position": 131072},
     "base 1e+06 where 10000 is expected, and linear scaling by 8 where none is"),
])
def test_another_base_of_per_axis_ladders_and_two_fields_are_named(tmp_path, name, expect, says):
    """Both said unknown: the per-axis ladders' base is read off them, and a ladder of another base divided by one
    factor names both fields, the base first."""
    p = tmp_path / "fields.py"
    p.write_text(OTHER_FIELDS)
    failed = _failed(check(f"{p}:{name}", expect, seed=0))
    assert failed and {r.diagnosis for r in failed} == {"base"}, [(r.property, r.diagnosis) for r in failed]
    assert all(says in r.message for r in failed), failed[0].message[-300:]


DECODERS = '''
import numpy as np
from ropespec.implementations.numpy_decode import Decoder


class AtZero(Decoder):
    """Every new token's key rotated at position 0: a cache position that never advances."""
    def step(self, x, position, rows=None):
        self._append(x, np.array([0], dtype=np.int64))
        return self._keys(1)


class OffByOne(Decoder):
    """Every new token's key rotated one position early: the cache offset read before it is advanced."""
    def step(self, x, position, rows=None):
        self._append(x, np.array([position - 1], dtype=np.int64))
        return self._keys(1)


def at_zero(expect):
    return AtZero(expect)


def off_by_one(expect):
    return OffByOne(expect)
'''


@pytest.mark.parametrize("name, says", [("at_zero", "at position 0 where"), ("off_by_one", "one position early")])
def test_a_decoding_step_at_another_position_is_named_position_offset(tmp_path, name, says):
    """Decoding that gives every new token position 0 said not-a-rotation, a cache offset off by one layout (unknown
    here): the step's new key is read at the positions a step could have used."""
    p = tmp_path / "decoders.py"
    p.write_text(DECODERS)
    failed = _failed(check(f"{p}:{name}", dtype="float64", seed=0, invariants=["decode.consistency"]))
    assert [r.diagnosis for r in failed] == ["position-offset"] and says in failed[0].message, failed[0].message[-300:]


TORCH_DECODERS = '''
import torch


class _Rope:
    """A plain, correct rotation in float32 (the declared class: angles formed in float32)."""

    def __init__(self, e):
        self.inv = 1.0 / e.rope_theta ** (torch.arange(0, e.head_dim, 2, dtype=torch.float32) / e.head_dim)

    def __call__(self, x, positions):
        ang = torch.as_tensor(positions).to(torch.float32)[:, None] * self.inv[None]
        c, s = torch.cos(ang), torch.sin(ang)
        a, b = x.chunk(2, dim=-1)
        return torch.cat([a * c - b * s, a * s + b * c], -1)


class _Cache:
    """A gpt-fast style decoder: its own rotary, its own cache of rotated keys, a step offset of its own."""

    def __init__(self, e):
        self.rope, self.keys, self.steps = _Rope(e), [], 0

    def prefill(self, x, positions):
        self.keys = [self.rope(torch.as_tensor(x), positions)]
        return torch.cat(self.keys)

    def step(self, x, position):
        self.steps += 1
        self.keys.append(self.rope(torch.as_tensor(x).reshape(1, -1), [self.at(position)]))
        return torch.cat(self.keys)


class NeverAdded(_Cache):
    def at(self, position):  # the cache offset never added: every generated token at position 0
        return 0


class BumpedTwice(_Cache):
    def at(self, position):  # a seen-token count bumped by an earlier layer: one past from the second step on
        return position + (self.steps >= 2)


def never_added(expect):
    return NeverAdded(expect)


def bumped_twice(expect):
    return BumpedTwice(expect)
'''


@pytest.mark.parametrize("name, says", [
    ("never_added", r"step 1 \(to length (\d+)\) rotates its new key at position 0 where \d+ is due \(never advanced\)"),
    ("bumped_twice", r"step 2 \(to length (\d+)\) rotates its new key at position (\d+) where \d+ is due \(one position "
                     r"late: the offset advanced twice\); step 1 used its own position, \d+"),
])
def test_decoding_that_restarts_or_skips_positions_says_the_positions_its_steps_used(tmp_path, name, says):
    """A plain, correct float32 rotation decoded at the wrong positions was named not-a-rotation (every generated
    token at 0) and layout (one past from the second step on): the step's key is read off for the one position that
    fits it, and the word is position-offset with the positions the steps used. The rotation's own float32 angles
    are its declared class, never angle-precision."""
    torch = pytest.importorskip("torch")  # noqa: F841
    p = tmp_path / "gptfast.py"
    p.write_text(TORCH_DECODERS)
    for dtype in ("float32", "bfloat16"):
        failed = _failed(check(f"{p}:{name}", {"head_dim": 64, "rope_theta": 10000}, array="torch", dtype=dtype,
                               seed=0, invariants=["decode.consistency"]))
        assert [r.diagnosis for r in failed] == ["position-offset"], (dtype, [r.message[-400:] for r in failed])
        assert re.search(says, failed[0].message) and "follows from" not in failed[0].message, failed[0].message[-400:]


DEEPSEEK = '''
import math
import numpy as np
from ropespec.implementations.numpy_rope import make
from ropespec.spec.expectation import Expect

E = Expect(head_dim=16, rope_theta=10000.0, max_position=8192, dtype="float64", angle_dtype="exact",
           inv_freq_dtype="exact", rope_scaling={"rope_type": "yarn", "factor": 40.0,
           "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 1.0})
_rope = make(E)
_m = 0.1 * 1.0 * math.log(40.0) + 1.0


def _attend(q, k, v, positions, causal, scale):
    qr, kr = _rope(q, positions), _rope(k, positions)
    s = qr @ kr.T * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def fixed(q, k, v, positions, causal):
    """DeepSeek-V3's attention: softmax_scale = head_dim^-0.5 * mscale(s, mscale_all_dim)^2."""
    return _attend(q, k, v, positions, causal, 16 ** -0.5 * _m * _m)


def buggy(q, k, v, positions, causal):
    """The softmax scale without mscale^2."""
    return _attend(q, k, v, positions, causal, 16 ** -0.5)
'''


def test_deepseeks_softmax_temperature_is_part_of_its_attention(tmp_path):
    """DeepSeek's YaRN scales cos and sin by mscale(s, mscale)/mscale(s, mscale_all_dim) and the softmax scale by
    mscale(s, mscale_all_dim)^2: the attention with it holds (it failed unknown), the one without it fails
    attention-factor (it passed)."""
    p = tmp_path / "deepseek_attention.py"
    p.write_text(DEEPSEEK)
    expect = {"head_dim": 16, "max_position": 8192, "dtype": "float64", "rope_scaling": {
        "rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 1.0,
        "mscale_all_dim": 1.0}}
    fixed = check(f"{p}:fixed", expect, family="attention", dtype="float64", seed=0)
    assert fixed.passed, fixed.report()
    failed = _failed(check(f"{p}:buggy", expect, family="attention", dtype="float64", seed=0))
    assert failed and {r.diagnosis for r in failed} == {"attention-factor"}, [(r.property, r.diagnosis) for r in failed]
    assert all("lacks DeepSeek's mscale(s, mscale_all_dim)^2 = 1.87385" in r.message for r in failed)
    # and the shipped numpy attention and decoder are DeepSeek's attention under its expectation
    for shipped in ("ropespec.implementations.attention:make", "ropespec.implementations.attention_decode:make"):
        ours = check(shipped, dict(expect, dtype="float32"), family="attention", dtype="float32", seed=0)
        assert ours.passed, ours.report()


FIRST_ROWS_POSITION = '''
import numpy as np


def _rope(x, p):
    d = x.shape[1]
    phi = np.asarray(p, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    a, b = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)], 1).astype(x.dtype)


def broadcast_first(x, positions):
    """Every row at positions[0] (a decode path's scalar offset used for a whole prefill)."""
    return _rope(x, np.full(len(x), np.asarray(positions)[0]))


def packed_from_first(x, positions, cu_seqlens):
    """Packed sequences (thd), every sequence from sequence 0's offset (Megatron / TransformerEngine's bug)."""
    cu = np.asarray(cu_seqlens)
    return _rope(x.reshape(len(x), -1), np.concatenate([positions[0] + np.arange(cu[i + 1] - cu[i])
                                                       for i in range(len(cu) - 1)])).reshape(x.shape)
'''


@pytest.mark.parametrize("target, layout", [("broadcast_first", None), ("packed_from_first", "thd")])
def test_rows_rotated_by_the_first_rows_position_are_a_layout_fault_in_every_property(tmp_path, target, layout):
    """One call's rows each rotated by another row's position is named where the positions are read (layout) by
    every property that fails, long calls included (not a tile: each row is right alone because it is then first)."""
    (tmp_path / "first.py").write_text(FIRST_ROWS_POSITION)
    result = check(f"{tmp_path / 'first.py'}:{target}", expect={"head_dim": 32, "max_position": 4096},
                   invariants=["rope.conformance", "rope.layout"], seed=0, layout=layout or "nd")
    failed = _failed(result)
    assert len(failed) >= 3 and {r.diagnosis for r in failed} == {"layout"}, [(r.property, r.diagnosis) for r in failed]
    assert any("sequence 0's offset" in r.message or "the first row's position" in r.message for r in failed)


AUTOCAST = '''
import torch


def apply(x, positions):
    """transformers' rotary forward without its autocast guard, called under bfloat16 autocast: inv_freq @ positions
    is a bfloat16 matmul, and cos and sin of its result are bfloat16 too."""
    d = x.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        freqs = (inv_freq[:, None] @ positions[None, :].float()).T
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos.to(x.dtype) + torch.cat((-x2, x1), dim=-1) * sin.to(x.dtype)
'''


def test_a_table_computed_under_autocast_is_angle_precision_not_a_broken_rotation(tmp_path):
    """Its norms move by ~u of bfloat16 (cos and sin rounded apart), which alone reads as no rotation: the
    candidate that forms the whole table in bfloat16 reproduces the output, and every failure says so."""
    pytest.importorskip("torch")
    (tmp_path / "autocast.py").write_text(AUTOCAST)
    result = check(f"{tmp_path / 'autocast.py'}:apply", expect="llama2-7b", array="torch", dtype="float32", seed=0,
                   invariants=["rope.conformance", "rope.norm-per-pair", "scaling.attention-factor"])
    failed = _failed(result)
    assert len(failed) >= 3 and {r.diagnosis for r in failed} == {"angle-precision"}, \
        [(r.property, r.diagnosis) for r in failed]
    assert any("formed in bfloat16 (a table computed under autocast)" in r.message for r in failed)


DYNAMIC_CONSTANT = '''
import numpy as np


def constant(x, positions):
    """Dynamic NTK whose base is computed once, for length {M}, whatever the call's length."""
    d, s, L, M = x.shape[1], 4.0, 2048, {M}
    phi = np.asarray(positions, dtype=np.float64)[:, None] * (
        10000.0 * (s * M / L - (s - 1)) ** (d / (d - 2))) ** (-np.arange(0, d, 2) / d)
    a, b = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)], 1).astype(x.dtype)
'''


@pytest.mark.parametrize("M", [2048, 4096])
def test_a_dynamic_table_that_does_not_follow_the_length_is_scaling(tmp_path, M):
    """A dynamic NTK table fixed at one length (the original one: no scaling at all; or another) fits the default
    ladder, or some base, at the one length it is read at: the table read again at max_position says it stays put,
    which no base and no rounding explains."""
    (tmp_path / "dyn.py").write_text(DYNAMIC_CONSTANT.replace("{M}", str(M)))
    result = check(f"{tmp_path / 'dyn.py'}:constant", seed=0, invariants=["rope.conformance"],
                   expect={"head_dim": 64, "max_position": 16384, "rope_scaling": {
                       "rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}})
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"scaling"}, [(r.property, r.diagnosis) for r in failed]
    assert all("does not follow the call's length" in r.message for r in failed)


def test_a_finding_of_several_fields_crosses_a_process_boundary_whole():
    """A worker hands its diagnoses back pickled: a Finding (a tuple that also knows the other fields' words) comes
    back with its word, evidence and those words (the transformers sweep's scheduler crashed unpickling one)."""
    import pickle

    from ropespec.properties.diagnose.findings import Finding, _with

    found = _with(("base", "theta is 5e5"), ("attention-factor", "every pair scaled by 1.1"))
    back = pickle.loads(pickle.dumps(found))
    assert isinstance(back, Finding) and tuple(back) == tuple(found) and back.also == ("attention-factor",)


GRID_FLOAT32 = '''
import numpy as np


def rope(x, positions):
    """A vision tower's [w | h] ladders of interleaved pairs over patches counted from {offset}, its inverse
    frequencies, angles and turn in float32 (as transformers' vision rotaries and apply functions form them)."""
    d = x.shape[1]
    inv = (1.0 / (np.float32(10000.0) ** (np.arange(0, d // 2, 2, dtype=np.float32) / np.float32(d // 2))))
    p = np.asarray(positions).astype(np.float32) + np.float32({offset})
    phi = np.concatenate([p[:, :1] * inv, p[:, 1:] * inv], axis=1).astype(np.float32)
    c, s = np.cos(phi), np.sin(phi)
    a, b = x[:, 0::2].astype(np.float32), x[:, 1::2].astype(np.float32)
    out = np.empty(x.shape, dtype=np.float32)
    out[:, 0::2], out[:, 1::2] = a * c - b * s, a * s + b * c
    return out
'''


@pytest.mark.parametrize("offset", [0, 1])
def test_float32_angles_on_a_short_grid_under_the_strict_class_are_angle_precision(tmp_path, offset):
    """SAM 3's and Inkling 2's vision rotaries under the strict class (the transformers sweep's third column): on a
    grid of 24 patches the float32 rounding leaves the exact bound at a few positions by little, which the growth
    sweep finds only when it measures every position of so short a domain; and patches counted from 1, as the
    expectation states, are no position-offset."""
    (tmp_path / "grid.py").write_text(GRID_FLOAT32.replace("{offset}", str(offset)))
    expect = {"head_dim": 64, "convention": "interleaved", "axes_dims_rope": [32, 32], "axis_names": ["w", "h"],
              "max_position": 24, **({"axes_offset": [1, 1]} if offset else {})}
    fine = check(f"{tmp_path / 'grid.py'}:rope", expect=expect, seed=1, profile="ci")
    assert fine.passed, fine.report()
    strict = check(f"{tmp_path / 'grid.py'}:rope", expect={**expect, "angle_dtype": "exact", "inv_freq_dtype": "exact"},
                   seed=1, profile="ci")
    failed = _failed(strict)
    assert failed and {r.diagnosis for r in failed} == {"angle-precision"}, [(r.diagnosis, r.message) for r in failed]


SCOUT_PORT = '''
import math

import numpy as np


def _inv_freq(low, high):
    d, theta, factor, L = 128, 500000.0, 16.0, 8192
    inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    wl = 2 * math.pi / inv
    out = np.where(wl < L / high, inv, inv / factor)
    if high != low:  # Llama 3.1's band, ramped
        smooth = (L / wl - low) / (high - low)
        mid = (wl >= L / high) & (wl <= L / low)
        out = np.where(mid, (1 - smooth) * inv / factor + smooth * inv, out)
    return out.astype(np.float32)


def _rope(inv):
    def rope(x, positions):
        ang = np.asarray(positions, dtype=np.float32)[:, None] * inv[None, :]
        c, s = np.cos(ang), np.sin(ang)
        a, b = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x)
        out[:, 0::2], out[:, 1::2] = a * c - b * s, a * s + b * c
        return out
    return rope


scout = _rope(_inv_freq(1.0, 1.0))
scout_with_llama31_bands = _rope(_inv_freq(1.0, 4.0))
'''


def test_a_frequency_off_where_angles_are_small_is_not_a_rounding(tmp_path):
    """Llama 4 Scout's step ported with Llama 3.1's band (a user's mistake): six slow pairs turn up to 8 times too
    slowly, where p theta is too small at the probed positions for a float32 rounding to show; a rounding explains an
    error only where every entry is within its allowance, so these are named scaling, not angle-precision (which they
    were, beside errors 2,700 times the bound). The port of the step holds."""
    (tmp_path / "scout.py").write_text(SCOUT_PORT)
    assert check(f"{tmp_path / 'scout.py'}:scout", "llama-4-scout", seed=0, profile="ci").passed
    result = check(f"{tmp_path / 'scout.py'}:scout_with_llama31_bands", "llama-4-scout", seed=0, profile="ci")
    failed = _failed(result)
    assert failed and {r.diagnosis for r in failed} == {"scaling"}, [(r.property, r.diagnosis) for r in failed]


@pytest.mark.parametrize("pi, word", [(3.14, "scaling"), (3.1416, "scaling"), ("bfloat16", None), ("float16", None)])
def test_a_scale_of_the_coordinates_is_scaling_and_its_rounding_is_not(pi, word):
    """DINOv3's coordinates at one factor: a hand-typed pi (3.14: said inverse frequencies formed in float16, a false
    word; 3.1416, 4 times the bound: unnamed) is scaling, with the factor; the scale rounded to bfloat16 or float16
    moves every pair by one factor too, but that factor is a rounding, not a scale, and is not said as one."""
    import math
    import re

    from ropespec.implementations.zoo._axes import build
    from ropespec.implementations.zoo.rope import near_coordinate_pi
    from ropespec.properties.diagnose import diagnose
    from ropespec.spec.dtypes import round_to

    e = Expect.from_dict(near_coordinate_pi.EXPECT)
    sc = e.axes_scale[0]
    factor = pi / math.pi if isinstance(pi, float) else float(round_to(sc, pi)) / sc
    offset = np.asarray(e.axes_offset)
    f = build(e, positions_map=lambda p: (p + offset) * factor - offset)
    found = diagnose(f, e)
    if word is None:
        assert found is None or found[0] != "scaling", found
    else:
        said = re.search(r"every pair turns ([0-9.]+) times its rate on every axis", found[1])
        assert found[0] == word and said and float(said.group(1)) == pytest.approx(factor, rel=1e-7), found


def test_an_attention_word_needs_a_measurement_that_excludes_the_other_models():
    """DeepSeek's attention without mscale^2 was named nope from a shrunk case at positions [0, 1], where q and k are
    so small that the turned and the unturned attention differ by less than the bound and both models fit: a word
    is said only where its model fits and the others do not, so the implementation is called once more where they
    differ by more than the bound; without that call the word is unknown, with what was measured."""
    from ropespec.properties import test_attention as ta
    from ropespec.reference.encodings import attention
    from ropespec.spec import tolerance

    e = Expect(head_dim=16, max_position=8192, dtype="float32", rope_scaling={
        "rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 1.0,
        "mscale_all_dim": 1.0})
    models = {word: m for word, _, m in ta._models(e)}
    attend = lambda q, k, v, p, causal: attention(models["attention-factor"], q, k, v, p, causal)  # noqa: E731
    pos, rng = np.array([0, 1]), np.random.default_rng(0)
    case = None
    for _ in range(50):  # a shrunk case: the smallest q and k at which the fault still shows, as hypothesis leaves it
        q, k, v = (rng.standard_normal((2, 16)) for _ in range(3))
        for s in np.geomspace(1e-3, 1, 40):
            out = attend(q * s, k * s, v, pos, True)
            bound = 2 * tolerance.attention_bound(e, q * s, k * s, v, pos)
            if np.any(np.abs(out - attention(e, q * s, k * s, v, pos, True)) > bound):
                case = (q * s, k * s, v, out, bound)
                break
        if case and np.all(np.abs(case[3] - attention(models["nope"], *case[:3], pos, True)) <= case[4]):
            break
        case = None
    assert case is not None, "no case where both models fit"
    q, k, v, out, bound = case
    word, evidence = ta._named(e, q, k, v, pos, out, bound, attend)
    assert word == "attention-factor", evidence
    assert "at positions [0, 1] it fits nope" in evidence and "and attention-factor" in evidence, evidence
    assert "attention-factor only" in evidence, evidence
    # an implementation that fits them at [0, 1] and neither where they differ: no word, both measurements said
    other = lambda q_, k_, v_, p_, causal: out if len(p_) == 2 else np.zeros((len(p_), v_.shape[1]))  # noqa: E731
    word, evidence = ta._named(e, q, k, v, pos, out, bound, other)
    assert word == "unknown" and "at positions [0, 1] it fits nope" in evidence and "none of them fits" in evidence, \
        evidence


def test_one_model_fitting_a_small_case_is_named_only_where_a_grown_case_confirms_it():
    """DeepSeek-V2's attention without mscale^2, checked under its YaRN with the factor restated as the cos/sin
    attention_factor, fitted NoPE alone at positions [0, 1] (two keys: one logit difference per head) and was named so:
    a model that fits a small case alone is named only where it alone fits a call at which every model and the
    expectation differ by more than the bound; there the scores without the attention factor fit, and nope does not."""
    from ropespec.implementations.zoo.attention import deepseek_v2_no_softmax_mscale as member
    from ropespec.properties import test_attention as ta
    from ropespec.reference.encodings import attention
    from ropespec.spec import tolerance

    e = Expect.from_dict(dict(member.EXPECT, dtype="float32"))
    models = {word: m for word, _, m in ta._models(e)}
    assert "attention-factor" in models  # the stated factor left out is a model, as DeepSeek's mscale^2 left out is
    attend = member.make(e)
    q, k, v = (ta.made_heads(e, h, 2, seed=i) for i, h in enumerate((e.n_heads, e.n_kv_heads, e.n_kv_heads)))
    pos = np.array([0, 1])
    out, bound = attend(q, k, v, pos, True), 2 * tolerance.attention_bound(e, q, k, v, pos)
    nope_only = lambda q_, k_, v_, p_, causal: attention(models["nope"], q_, k_, v_, p_, causal)  # noqa: E731
    word, evidence = ta._named(e, q, k, v, pos, nope_only(q, k, v, pos, True), bound, nope_only)
    assert word == "nope", evidence  # NoPE itself is still named, on the grown case too
    word, evidence = ta._named(e, q, k, v, pos, out, bound, attend)
    assert word == "attention-factor" and "attention-factor only" in evidence, evidence


KERAS_LITGPT = '''
import numpy as np

from ropespec.implementations.zoo._base import build, spec_table


def keras_dynamic(x, positions):
    """keras-hub's "dynamic" RoPE: every frequency divided by 4^(128/126), a uniform linear divisor."""
    d = x.shape[1]
    inv = 10000.0 ** (-np.arange(0, d, 2) / d) / 4.0 ** (128 / 126)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(x.dtype)


def _swapped_unscaled(expect, seq_len):
    s = dict(expect.to_dict()["rope_scaling"])
    s["beta_fast"], s["beta_slow"] = s.get("beta_slow") or 1, s.get("beta_fast") or 32
    return spec_table(expect.replace(rope_scaling=s), seq_len)[0], 1.0


def litgpt_yarn(expect):
    """litgpt-like YaRN: beta_fast and beta_slow swapped, and no attention factor (1 where g(s) is due)."""
    return build(expect, table=_swapped_unscaled)
'''


@pytest.mark.parametrize("rope_scaling", [{"rope_type": "ntk", "factor": 4.0}, {
    "rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 4096}], ids=["ntk", "dynamic"])
def test_the_measured_model_names_the_method_whatever_method_was_expected(tmp_path, rope_scaling):
    """keras-hub's uniform divisor was unknown under NTK ('no model of a fault fits ... curve: linear 4.088994') and
    linear scaling under dynamic: every method's curve is fitted to the measured frequencies, whatever method the
    expectation names, and every failing property says the same."""
    p = tmp_path / "real.py"
    p.write_text(KERAS_LITGPT)
    failed = _failed(check(f"{p}:keras_dynamic", {"head_dim": 128, "rope_scaling": rope_scaling}, seed=0))
    assert failed and {r.diagnosis for r in failed} == {"scaling"}, [(r.property, r.diagnosis) for r in failed]
    assert all("4.08899" in r.message and "linear" in r.message and "NTK-aware base's factor" in r.message
               for r in failed), failed[0].message[-400:]


def test_a_second_field_measured_wrong_is_its_own_fault_not_a_consequence(tmp_path, cli):
    """litgpt's YaRN with its betas swapped and no attention factor: the frequencies are named (scaling), and the
    attention factor (1 where 1.34657 is due) is a field of its own: said after them in every failure the frequencies
    explain, and the word of the failures it alone explains (norms, the identity at 0, the attention factor), never
    'follows from scaling'."""
    p = tmp_path / "real.py"
    p.write_text(KERAS_LITGPT)
    expect = {"head_dim": 64, "max_position": 131072, "rope_scaling": {
        "rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096}}
    failed = {r.property: r for r in _failed(check(f"{p}:litgpt_yarn", expect, seed=0))}
    for prop in ("norm_per_pair", "identity_at_zero", "attention_factor"):
        assert failed[prop].diagnosis == "attention-factor" and "follows from" not in failed[prop].message, \
            failed[prop].message[-300:]
    assert failed["conformance"].diagnosis == "scaling", failed["conformance"].message[-300:]
    said = failed["conformance"].message
    assert "yarn with beta_fast and beta_slow swapped" in said and "and attention-factor: every pair comes out 1 " \
        "times its input, expected the attention factor 1.34657" in said, said[-400:]
    # and the fingerprint says what check says (it said 'curve: unknown'): the expected configuration's mistakes
    code, out, err = cli("fingerprint", f"{p}:litgpt_yarn", "--expect", json.dumps(expect))
    assert code == 0 and "curve: yarn with beta_fast and beta_slow swapped" in out, out


ATTENTION_DECODERS = '''
from ropespec.implementations.attention_decode import Decoder


class NeverAdded(Decoder):
    def step(self, q, k, v, position):  # every generated token's query and key at position 0
        return super().step(q, k, v, 0)


class BumpedTwice(Decoder):
    steps = 0

    def step(self, q, k, v, position):  # one past from the second step on
        self.steps += 1
        return super().step(q, k, v, position + (self.steps >= 2))


def never_added(expect):
    return NeverAdded(expect)


def bumped_twice(expect):
    return BumpedTwice(expect)
'''


@pytest.mark.parametrize("name, says", [
    ("never_added", r"step 1 turns its query and key at position 0 where \d+ is due \(never advanced"),
    ("bumped_twice", r"step 2 turns its query and key at position (\d+) where \d+ is due \(one position late: the "
                     r"offset advanced twice\); step 1 used its own position"),
])
def test_an_attention_decoder_at_the_wrong_positions_says_the_positions_its_steps_used(tmp_path, name, says):
    """The attention family's decoders, as the rope family's: the step one past from the second step on was unknown;
    its query and key are read at the one position their output fits."""
    p = tmp_path / "attention_decoders.py"
    p.write_text(ATTENTION_DECODERS)
    failed = _failed(check(f"{p}:{name}", {"head_dim": 64, "rope_theta": 10000}, family="attention", dtype="float32",
                           seed=0, invariants=["decode.attention-consistency"]))
    assert [r.diagnosis for r in failed] == ["position-offset"], [r.message[-300:] for r in failed]
    assert re.search(says, failed[0].message), failed[0].message[-400:]


FLUX_HEAD_DIM_LADDERS = '''
import numpy as np


def _axis(dim, pos, theta, norm):
    """diffusers' get_1d_rotary_pos_embed(dim, pos, theta) with ``norm`` in the exponent's denominator (FLUX's: dim)."""
    freqs = 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64)[: dim // 2] / norm)
    ang = np.outer(np.asarray(pos, dtype=np.float64), freqs)
    return np.repeat(np.cos(ang), 2, axis=1), np.repeat(np.sin(ang), 2, axis=1)


def _flux(norm_of):
    def rope(x, ids):
        parts = [_axis(d, ids[:, a], 10000.0, norm_of(d)) for a, d in enumerate((16, 56, 56))]
        cos = np.concatenate([c for c, _ in parts], axis=1)
        sin = np.concatenate([s for _, s in parts], axis=1)
        xf = x.astype(np.float64)
        rot = np.stack([-xf[:, 1::2], xf[:, 0::2]], axis=-1).reshape(xf.shape)  # interleaved pairs
        return (xf * cos + rot * sin).astype(x.dtype)
    return rope


head_dim_ladders = _flux(lambda d: 128)  # every axis's ladder theta^(-2k/128)
own_ladders = _flux(lambda d: d)  # FLUX's: theta^(-2k/d_a)
'''


def test_per_axis_ladders_normalised_by_head_dim_are_rotary_dim_in_check_and_fingerprint(tmp_path, checked):
    """FLUX's three ladders [16, 56, 56] each normalised by head_dim 128 (theta^(-2k/128) on every axis) were unknown:
    no base makes axes of other sizes share one ladder step. The per-axis ladders normalised by another dim than each
    axis's own are a model of their own, said with 1-D RoPE's word for an exponent normalised by head_dim, and the
    fingerprint reads the same, with no expectation to reproduce it."""
    from ropespec import api

    p = tmp_path / "flux_ladders.py"
    p.write_text(FLUX_HEAD_DIM_LADDERS)
    failed = _failed(checked(f"{p}:head_dim_ladders", "flux.1-dev", seed=0, profile="dev",
                             invariants=["axes.one-axis", "rope.conformance"]))
    assert failed and {r.diagnosis for r in failed} == {"rotary-dim"}, [(r.diagnosis, r.message[-300:]) for r in failed]
    assert "theta^(-2k/128), the exponent normalised by head_dim 128, where each axis's own dims d_a = [16, 56, 56]" \
        in failed[0].message, failed[0].message[-400:]
    fp = api.fingerprint(f"{p}:head_dim_ladders", "flux.1-dev")
    assert fp.axes["axes_normalised_by"] == {"dim": 128, "as": "head_dim"} and fp.base == 10000.0
    assert fp.expect is None and "normalised by head_dim 128" in fp.no_expect
    assert not _failed(checked(f"{p}:own_ladders", "flux.1-dev", seed=0, profile="dev",
                               invariants=["axes.one-axis", "rope.conformance"]))


@pytest.mark.parametrize("over, hint", [(62, "its exponent over 62 where the rotary dim is 64"), (64, None)])
def test_a_base_that_is_the_expected_one_over_another_denominator_says_so(over, hint):
    """An exponent over d - 2 was named [base] with a fitted base of 13459.6 and no word of the ladder's denominator:
    the same ladder is base 10000 over 62, and which field the code got wrong no measurement tells, so both are said;
    a base that is another base (500000 for 10000) gets no such reading."""
    from ropespec.implementations.zoo._base import build
    from ropespec.properties.diagnose import diagnose

    e = Expect(head_dim=64, rope_theta=1e4, dtype="float64", max_position=4096)
    f = build(e, exponent_dim=over) if over != 64 else build(e, base=5e5)
    word, evidence = diagnose(f, e)
    assert word == "base", evidence
    if hint:
        assert hint in evidence and "fit base 13459.6" in evidence, evidence
    else:
        assert "exponent over" not in evidence, evidence
