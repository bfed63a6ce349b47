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
    assert code == 2 and "--table: the table of an apply kernel, with --form kernel, qk or complex (not --form apply)" in err, err


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


META_COMPLEX = '''
"""Meta's Llama reference code (llama/model.py) and DeepSeek's, as their users copy them."""
import torch


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def deepseek_v3(x, freqs_cis):  # DeepSeek-V3's inference/model.py: one tensor at a time
    dtype = x.dtype
    x = torch.view_as_complex(x.float().view(*x.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, x.size(1), 1, x.size(-1))
    return torch.view_as_real(x * freqs_cis).flatten(3).to(dtype)


def deepseek_v2(xq, xk, freqs_cis):  # transformers' deepseek_v2: q and k (b, h, s, d), a table per batch row
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.unsqueeze(1)
    return torch.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq), torch.view_as_real(xk_ * freqs_cis).flatten(3).type_as(xk)
deepseek_v2.table = "batch"


def keys_conjugated(xq, xk, freqs_cis):  # a port that conjugates the table for the keys
    return apply_rotary_emb(xq, xk, freqs_cis)[0], apply_rotary_emb(xq, xk, freqs_cis.conj())[1]


def precompute(positions, dim=64, theta=10000.0):  # the library's own table at given positions
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    return torch.polar(torch.ones(len(positions), dim // 2), torch.outer(positions.float(), freqs))
'''
INTERLEAVED = {"head_dim": 64, "convention": "interleaved", "n_heads": 4, "n_kv_heads": 2}


def test_a_complex_form_function_is_checked_as_its_users_call_it(tmp_path):
    """Meta's apply_rotary_emb(xq, xk, freqs_cis) verbatim passes in float32 and bfloat16 (q and k sequence first, one
    table per call), as do DeepSeek-V3's one-tensor form and transformers' DeepSeek-V2 form (heads first, a table per
    batch row); Meta's code with the library's own table (--table) passes too; keys turned by the conjugate table fail
    with direction, said of the keys only."""
    pytest.importorskip("torch")
    from ropespec import check

    p = tmp_path / "meta.py"
    p.write_text(META_COMPLEX)
    for target, layout, dtype in ((f"{p}:apply_rotary_emb", "nd", "bfloat16"), (f"{p}:deepseek_v3", "nd", "float32"),
                                  (f"{p}:deepseek_v2", "bhsd", "bfloat16")):
        r = check(target, INTERLEAVED, form="complex", layout=layout, array="torch", dtype=dtype, seed=0)
        assert r.passed and {x.status for x in r.results if x.applicable} == {"pass"}, r.report()
    piped = check(f"{p}:apply_rotary_emb", {"head_dim": 64, "convention": "interleaved"}, form="complex",
                  table=f"{p}:precompute", array="torch", seed=0, invariants=["rope.conformance"])
    assert piped.passed and {x.status for x in piped.results if x.applicable} == {"pass"}, piped.report()
    bad = check(f"{p}:keys_conjugated", INTERLEAVED, form="complex", array="torch", seed=0, invariants=["kernel.qk"])
    [failed] = bad.results
    assert failed.diagnosis == "direction" and "k_embed turns by -p theta_i" in failed.message, bad.report()
    assert "apply(xq, xk, freqs_cis)" in failed.message, failed.message


def test_the_complex_form_is_a_form_of_its_own_layouts(capsys):
    """The complex form takes q and k sequence first or heads first; another layout, or a table shape it does not
    know, is a clear answer."""
    code = main(["check", "ropespec.implementations.numpy_complex:make", "--form", "complex", "--layout", "thd"])
    err = capsys.readouterr().err
    assert code == 2 and "--layout thd: a layout of the apply form; drop it with --form complex" in err, err
    assert main(["check", "ropespec.implementations.numpy_complex:make", "--form", "complex", "--layout", "bhsd",
                 "--seed", "1", "--expect", '{"head_dim": 32, "n_heads": 2, "n_kv_heads": 1}']) == 1
    out = capsys.readouterr().out  # numpy_complex takes (b, s, h, d): handed (b, h, s, d), its broadcast fails
    assert "kernel.qk (qk): fail" in out, out
