"""--form kernel: an apply kernel checked as it is, through the command line a user runs."""

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
