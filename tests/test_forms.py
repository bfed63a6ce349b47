"""--form table and --form kernel: a table builder and an apply kernel checked as they are, through the
command line a user runs."""

import shlex
import textwrap

import pytest

from ropespec.cli import main

KERNELS = '''
import numpy as np

def per_dim(x, cos, sin):  # transformers' layout: cos/sin (n, r), [c | c] for the half convention
    h = cos.shape[1] // 2
    out = x.copy()
    x1, x2 = x[:, :h], x[:, h:2 * h]
    out[:, :h] = x1 * cos[:, :h] - x2 * sin[:, :h]
    out[:, h:2 * h] = x2 * cos[:, h:] + x1 * sin[:, h:]
    return out

def per_pair(x, cos, sin):  # vLLM's cache layout: one value per pair
    h = cos.shape[1]
    out = x.copy()
    x1, x2 = x[:, :h], x[:, h:2 * h]
    out[:, :h] = x1 * cos - x2 * sin
    out[:, h:2 * h] = x1 * sin + x2 * cos
    return out
per_pair.table = "pair"

def badly_declared(x, cos, sin):
    return x
badly_declared.table = "rows"

def in_place(x, cos, sin):
    x[:] = per_dim(x, cos, sin)
    return x

def hf_table(positions):  # a rotary-embedding module's forward: (n, r) per dim, [c | c]
    inv = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    freqs = positions[:, None].astype(np.float64) * inv
    emb = np.concatenate([freqs, freqs], axis=1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)

def vllm_table(positions):  # vLLM's cos_sin_cache rows: one value per pair
    c, s = hf_table(positions)
    return c[:, :64], s[:, :64]
'''


@pytest.fixture
def kernels(tmp_path):
    p = tmp_path / "kernels.py"
    p.write_text(textwrap.dedent(KERNELS))
    return p


@pytest.mark.parametrize("name, expect", [("per_dim", "llama2-7b"), ("per_pair", "gpt-neox-20b")])
def test_a_correct_kernel_passes_in_either_table_layout(capsys, kernels, name, expect):
    code = main(["check", f"{kernels}:{name}", "--form", "kernel", "--expect", expect, "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "kernel.rotation" in out and "1 passed, 0 failed" in out


@pytest.mark.parametrize("name, word, words", [
    ("badly_declared", "shape", "declares table = 'rows'"),
    ("in_place", "input-mutated", "wrote into its argument x"),
])
def test_a_kernel_that_breaks_the_contract_is_named(capsys, kernels, name, word, words):
    code = main(["check", f"{kernels}:{name}", "--form", "kernel", "--expect", "llama2-7b", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 1 and f"[{word}]" in out and words in out, out


def test_form_belongs_to_the_rope_family(capsys, kernels):
    assert main(["check", f"{kernels}:per_dim", "--form", "kernel", "--family", "sinusoidal"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--form kernel" in err[0], err


@pytest.mark.parametrize("name", ["hf_table", "vllm_table"])
def test_a_table_builder_taking_positions_passes_per_dim_or_per_pair(capsys, kernels, name):
    """table(positions) is a plain function (its one argument is named positions), checked under llama2-7b's
    expectation; the per-dim table's duplicated halves agree. Its float32 angle: the default class."""
    code = main(["check", f"{kernels}:{name}", "--form", "table", "--expect", "llama2-7b", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "table.angles" in out and "1 passed, 0 failed" in out


def test_the_fingerprint_reads_a_table_builder(capsys):
    code = main(["fingerprint", "ropespec.implementations.zoo.rope.table_wrong_base:make", "--form", "table", "--expect",
                 '{"head_dim": 64}', "--max-position", "4096"])
    out = capsys.readouterr().out
    assert code == 0 and "base: 10000" in out and "convention: half" in out, out


def test_the_qk_form_checks_every_head_and_batch_row(capsys):
    """transformers' signature in numpy passes; the member whose keys take batch row 0's table is named layout."""
    assert main(["check", "ropespec.implementations.numpy_qk:make", "--form", "qk", "--seed", "1"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    code = main(["check", "ropespec.implementations.zoo.rope.qk_k_table_of_row_0:make", "--form", "qk", "--seed", "1", "--expect",
                 '{"head_dim": 64, "n_heads": 4, "n_kv_heads": 2}'])
    out = capsys.readouterr().out
    assert code == 1 and "[layout]" in out and "batch row 0's table" in out, out


@pytest.mark.parametrize("target, direction", [("ropespec.implementations.numpy_qk:make", "forward"),
                                               ("ropespec.implementations.zoo.rope.qk_sin_negated:make", "reverse")])
def test_the_fingerprint_reads_an_apply_function_of_the_qk_form(capsys, target, direction):
    code = main(["fingerprint", target, "--form", "qk", "--expect", '{"head_dim": 64}', "--max-position", "4096"])
    out = capsys.readouterr().out
    assert code == 0 and f"direction: {direction}" in out and "convention: half" in out, out
    assert "the kernel was handed ropespec's table" in out, out


def test_a_form_failure_replays_in_its_form(capsys):
    """The replay command of a kernel failure says --form kernel (without it the kernel was called as f(x, p))."""
    code = main(["check", "ropespec.implementations.zoo.rope.kernel_sin_negated:make", "--form", "kernel", "--seed", "2"])
    out = capsys.readouterr().out
    replay = next(ln.split("replay: ", 1)[1] for ln in out.splitlines() if "replay: " in ln)
    assert code == 1 and " --form kernel " in f"{replay} ", replay
    assert main(shlex.split(replay)[1:]) == 1
    assert "[direction]" in capsys.readouterr().out


def test_a_kernel_and_its_librarys_table_are_checked_together(capsys):
    """--form kernel --table: every apply property on kernel(x, *table(positions)); a wrong table is named as an
    apply function's would be, and the replay keeps both."""
    base = ["check", "ropespec.implementations.numpy_kernel:make", "--form", "kernel", "--dtype", "float32", "--seed", "3"]
    code = main([*base, "--table", "ropespec.implementations.numpy_table:make", "--invariant", "rope.conformance"])
    out = capsys.readouterr().out
    assert code == 0 and "--form kernel with --table ropespec.implementations.numpy_table:make" in out, out
    code = main([*base, "--table", "ropespec.implementations.zoo.rope.table_wrong_base:make", "--expect",
                 '{"head_dim": 64, "rope_theta": 1e6}', "--invariant", "rope.conformance:conformance"])
    out = capsys.readouterr().out
    assert code == 1 and "[base]" in out and "fit base 10000" in out, out
    replay = next(ln.split("replay: ", 1)[1] for ln in out.splitlines() if "replay: " in ln)
    assert "--form kernel --table ropespec.implementations.zoo.rope.table_wrong_base:make" in replay, replay


def test_a_table_without_a_kernel_is_one_line_exit_2(capsys):
    code = main(["check", "ropespec.implementations.numpy_rope:make", "--table", "ropespec.implementations.numpy_table:make"])
    err = capsys.readouterr().err
    assert code == 2 and "--table: the table of an apply kernel, with --form kernel or qk (not --form apply)" in err, err


def test_a_familys_failure_replays_in_its_family(capsys):
    """The replay of a sinusoidal failure says --family sinusoidal (without it the invariant was not applicable to
    the rope function the target was loaded as: nothing ran)."""
    code = main(["check", "ropespec.implementations.zoo.sinusoidal.sinusoidal_scaled:make", "--family", "sinusoidal", "--invariant",
                 "sinusoidal.norm", "--seed", "1"])
    out = capsys.readouterr().out
    replay = next(ln.split("replay: ", 1)[1] for ln in out.splitlines() if "replay: " in ln)
    assert code == 1 and "--family sinusoidal" in replay, replay
    assert main(shlex.split(replay)[1:]) == 1
    assert "sinusoidal.norm" in capsys.readouterr().out


QK = '''
import numpy as np

def _rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)

def apply(q, k, cos, sin):  # transformers' apply_rotary_pos_emb: cos/sin (batch, seq, d), heads on axis 1
    c, s = cos[:, None], sin[:, None]
    return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s

def first_key_head_only(q, k, cos, sin):  # right only when h_kv = 1: later key heads come back as they went in
    c, s = cos[:, None], sin[:, None]
    k_out = k.copy()
    k_out[:, :1] = k[:, :1] * c + _rotate_half(k[:, :1]) * s
    return q * c + _rotate_half(q) * s, k_out
'''


def test_a_plain_qk_function_is_checked_with_grouped_query_heads(tmp_path):
    """Head counts and batch sizes are call shapes: a plain function is called with them drawn, as a factory is,
    and a function right only for one key head fails, named from the heads it left unrotated."""
    from ropespec import check

    p = tmp_path / "qk.py"
    p.write_text(QK)
    good = check(f"{p}:apply", {"head_dim": 64}, form="qk", seed=0, invariants=["kernel.qk"])
    [r] = good.results
    assert r.status == "pass" and "unsupported" not in r.message, good.report()
    bad = check(f"{p}:first_key_head_only", {"head_dim": 64}, form="qk", seed=0, invariants=["kernel.qk"])
    [r] = bad.results
    assert r.status == "fail" and r.diagnosis == "layout", bad.report()
    assert "come back unrotated" in r.message and "k_embed" in r.message, r.message


def test_a_plain_function_refused_another_expectation_names_the_field():
    from ropespec.implementations.contract import Unsupported
    from ropespec.implementations import load_implementation
    from ropespec.spec import Expect

    s = load_implementation("ropespec.implementations.zoo.rope.off_by_one:make", expect=Expect(head_dim=8), isolate=False)
    s.mode = "plain"  # as a plain function computing head_dim 8 would be
    try:
        s.bind(Expect(head_dim=8, n_heads=4, n_kv_heads=2))
    except Unsupported as e:
        assert "n_heads 4, not 1" in str(e) and "n_kv_heads 2, not 1" in str(e), str(e)
    else:
        raise AssertionError("a plain function was bound to another expectation")
    finally:
        s.close()


WRONG_BACKWARD = '''
import torch

class _Rotate(torch.autograd.Function):
    """A kernel with its own backward, which rotates forward again instead of back (sin not negated)."""

    @staticmethod
    def forward(ctx, x, cos, sin):
        ctx.save_for_backward(cos, sin)
        return _turn(x, cos, sin)

    @staticmethod
    def backward(ctx, g):
        cos, sin = ctx.saved_tensors
        return _turn(g, cos, sin), None, None

def _turn(x, cos, sin):
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat([x1 * cos[..., :h] - x2 * sin[..., :h], x2 * cos[..., h:] + x1 * sin[..., h:]], dim=-1)

def kernel(x, cos, sin):
    return _Rotate.apply(x, cos, sin)
'''


def test_a_kernel_whose_custom_backward_turns_the_wrong_way_fails_with_direction(tmp_path):
    """A --form kernel function's custom backward is checked with ropespec's exact table: a backward that rotates
    the upstream gradient forward (its sin not negated) fails autograd with the word direction while its forward
    passes."""
    pytest.importorskip("torch")
    from ropespec import check

    p = tmp_path / "kern.py"
    p.write_text(WRONG_BACKWARD)
    result = check(f"{p}:kernel", {"head_dim": 64}, form="kernel", array="torch", seed=0)
    rows = {r.invariant: r for r in result.results if r.applicable}
    assert rows["kernel.rotation"].status == "pass", result.report()
    grad = rows["autograd.inverse-rotation"]
    assert grad.status == "fail" and grad.diagnosis == "direction", grad.message
    assert "the forward rotation, not its inverse" in grad.message


@pytest.mark.parametrize("member, one_sided", [("qk_query_reversed", True), ("qk_sin_negated", False)])
def test_a_direction_flipped_on_q_only_is_said_so(member, one_sided):
    """Both turn a query the other way (direction); only the one that keeps RoFormer's keys is said to make the scores
    depend on m + n."""
    from ropespec import check

    r = check(f"ropespec.implementations.zoo.rope.{member}:make", {"head_dim": 64, "n_heads": 2, "n_kv_heads": 1},
              form="qk", profile="ci", seed=1, invariants=["kernel.qk"])
    [failed] = [x for x in r.results if x.status == "fail"]
    assert failed.diagnosis == "direction", r.report()
    assert ("flipped on one of q and k only" in failed.message) == one_sided, failed.message
