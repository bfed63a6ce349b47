"""The warm-up call, made before any property, tells when TARGET is not the function its contract describes: one line
and exit 2, never a failure of every property (or a crash when a property asks a wrong function for a big result).

* llm-foundry's ``build_alibi_bias(n_heads, seq_len, full=True)`` is read in MPT's signature, (n_heads, sequence_length),
  and returns (1, h, L, L): every property was then called on it, until one asked for 64 GiB and was blamed for it;
* a torch function checked without ``--array torch`` failed every property with "'numpy.ndarray' object has no
  attribute 'to'".
"""

from __future__ import annotations

import textwrap

import pytest


FOUNDRY = '''
import numpy as np


def build_alibi_bias(n_heads, seq_len, full=True, alibi_bias_max=8):
    """llm-foundry's builder, in numpy: full=True (its default) gives every query's row, (1, h, L, L)."""
    bias = np.arange(1 - seq_len, 1, dtype=np.float32).reshape(1, 1, 1, seq_len)
    if full:
        bias = -np.abs(bias - np.arange(1 - seq_len, 1, dtype=np.float32).reshape(1, 1, seq_len, 1))
    m = np.arange(1, n_heads + 1, dtype=np.float32) * (alibi_bias_max / n_heads)
    return bias * (1.0 / 2.0 ** m).reshape(1, n_heads, 1, 1)
'''

TORCH = '''
import torch


def apply(x, positions):
    """A correct torch RoPE (half pairs, base 10000)."""
    d = x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
    ang = positions.to(torch.float32)[:, None] * inv
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    c, s = ang.cos(), ang.sin()
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).to(x.dtype)
'''

SHORT = '''
def apply(x, positions):
    """Drops the last pair: not the contract's shape."""
    return x[:, :-2]
'''


def _run(cli, tmp_path, name, text, *args):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return cli("check", f"{tmp_path / name}.py:{args[0]}", *args[1:], "--json", tmp_path / "r.json")


def test_a_result_of_another_shape_at_the_warm_up_is_one_line_and_exit_2(cli, tmp_path):
    code, out, err = _run(cli, tmp_path, "foundry", FOUNDRY, "build_alibi_bias", "--family", "alibi")
    assert code == 2, out + err
    assert err.count("\n") == 1 and "returned shape (1, 2, 2, 2)" in err and "build_alibi_bias(n_heads, " \
        "sequence_length" in err and "no property was run" in err, err
    assert not (tmp_path / "r.json").exists(), "no report of a run that did not start"


def test_an_apply_function_of_another_output_shape_is_exit_2(cli, tmp_path):
    code, out, err = _run(cli, tmp_path, "short", SHORT, "apply")
    assert code == 2 and err.count("\n") == 1, out + err
    assert "rope (x, positions): returned shape (2, 126), expected (2, 128)" in err, err


def test_a_torch_function_without_array_torch_is_told_to_use_it(cli, tmp_path):
    pytest.importorskip("torch")
    code, out, err = _run(cli, tmp_path, "torchrope", TORCH, "apply", "--expect", '{"head_dim": 64}')
    assert code == 2 and err.count("\n") == 1, out + err
    assert "'numpy.ndarray' object has no attribute 'to'" in err and "--array torch" in err, err
    code, out, err = _run(cli, tmp_path, "torchrope", TORCH, "apply", "--expect", '{"head_dim": 64}',
                          "--array", "torch", "--invariant", "rope.conformance")
    assert code == 0, out + err


def test_a_result_of_another_dtype_is_still_the_verdict_of_the_properties(cli, tmp_path):
    """The warm-up turns away a function of another contract only; a wrong dtype or kind is a contract failure that
    the properties report ([shape], exit 1)."""
    code, out, err = _run(cli, tmp_path, "f16", '''
        import numpy as np
        from ropespec.implementations.numpy_rope import make
        from ropespec.spec.expectation import Expect
        _f = make(Expect(head_dim=8, dtype="float32", angle_dtype="exact", inv_freq_dtype="exact"))
        def apply(x, positions):
            return _f(x, positions).astype(np.float16)
        ''', "apply", "--expect", '{"head_dim": 8}', "--invariant", "contract.shape-finite")
    assert code == 1 and "[shape]" in out, out + err
