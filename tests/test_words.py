"""The word a failure carries names its cause, whatever the dtype, and one root cause gets one word.

Issue 12 items 5 and 6: precision named as precision (a rounding's signature, not one operation order;
the same word in bfloat16 as in float32), a structural fault as the root of every failure it causes
("follows from <word>"), the report leading with it, and decode evidence that tells the tables apart.
"""

from __future__ import annotations

import numpy as np
import pytest

from implementations.zoo import members
from properties.framework import PROPERTIES, all_properties, run_property
from ropespec import check
from ropespec.cli import main
from spec import Expect, presets

all_properties()

BF16_ANGLES = '''
import numpy as np
from spec.dtypes import round_to


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
from implementations.torch_rope import make
from spec import presets

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
from implementations.numpy_rope import make
from spec import Expect

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
    code = main(["check", "implementations.zoo.writes_half_layout:make", "--expect",
                 '{"head_dim": 64, "convention": "interleaved", "max_position": 8192}', "--seed", "0"])
    out = capsys.readouterr().out
    assert code == 1
    listing = out[out.index("failing:"):]
    assert "implementations.zoo.writes_half_layout:make: root cause layout" in listing.splitlines()[1]


def test_stale_cache_evidence_names_a_row_whose_rotation_changed():
    """'rows 0..0' was vacuous: row 0 sits at p = 0, where every table gives the identity."""
    [member] = [m for m in members() if m.name == "decode_stale_cache"]
    r = run_property(PROPERTIES["consistency"], member.subject(), profile="ci", seed_value=0)
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
    result = check("implementations.adapters.hf:llama", expect=e, array="torch",
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
    (tmp_path / "mod.py").write_text("from implementations.zoo.writes_half_layout import make as llama\n")
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
    from properties.precision import explain_low_precision

    e = Expect(head_dim=64, dtype="float32", max_position=4096)
    th = 10000.0 ** (-np.arange(0, 64, 2) / 64)

    def f(x, positions):
        phi = np.asarray(positions, dtype=np.float64)[:, None] * th[None, :] + 1.8e-6
        c, s = np.cos(phi), np.sin(phi)
        a, b = x[:, :32], x[:, 32:]
        return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(np.float32).astype(np.float64)

    assert explain_low_precision(f, e, np.array([1, 3, 5, 33, 257, 999])) is None


def test_the_terminal_table_prints_bracketed_text_as_text():
    """rich read '[layout]' and '[row 1, dim 5]' as markup and deleted them from the table (issue 15)."""
    import io

    from rich.console import Console

    from ropespec import report

    result = check("implementations.zoo.writes_half_layout:make", invariants=["rope.identity-at-zero"], seed=0,
                   expect={"head_dim": 64, "convention": "interleaved", "max_position": 8192})
    buf = io.StringIO()
    report.render(result.reports, Console(file=buf, force_terminal=True, width=250, emoji=False, color_system=None),
                  seed=0, profile="dev")
    table, _, failing = buf.getvalue().partition("failing:")
    row = next(line for line in table.splitlines() if "rope.identity-at-zero" in line)
    assert "fail" in row and "layout" in row, table  # the word has a column of its own
    assert "[layout]" in failing and "[row " in failing, failing  # and the detail below keeps its brackets
