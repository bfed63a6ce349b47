"""What ropespec hands an implementation is what real model code receives: C-contiguous arrays of their own.

Only ``rope.layout`` draws other storage (fused buffers, transposed, reversed, broadcast), on purpose, and its
failures name the storage. Meta's llama-models and mistral-inference call ``torch.view_as_complex``, which refuses a
last dimension whose stride is not 1: handed a Fortran-ordered array (a numpy fancy index keeps its order through
``astype`` and ``torch.tensor``), their correct code failed ``rope.composition`` with an exception.
"""

from __future__ import annotations

import textwrap

import pytest

from ropespec import check

STRICT = '''
import numpy as np

def apply(x, positions):
    """A correct half-convention RoPE that insists on contiguous memory, as compiled kernels do."""
    if not (x.flags.c_contiguous and positions.flags.c_contiguous):
        raise ValueError(f"non-contiguous input: strides {x.strides}")
    d = x.shape[1]
    inv = 10000.0 ** (-np.arange(0, d, 2) / d)
    ang = positions[:, None] * inv
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=1).astype(x.dtype)
'''

META = '''
import torch

def apply(x, positions):
    """Meta llama-models' apply_rotary_emb: interleaved pairs as complex numbers (view_as_complex)."""
    d = x.shape[-1]
    freqs = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    cis = torch.polar(torch.ones(len(positions), d // 2), torch.outer(positions.float(), freqs))
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * cis).flatten(-2).type_as(x)
'''


def _write(tmp_path, name, text):
    p = tmp_path / f"{name}.py"
    p.write_text(textwrap.dedent(text))
    return f"{p}:apply"


def test_every_property_hands_over_contiguous_memory(tmp_path):
    result = check(_write(tmp_path, "strict", STRICT), {"head_dim": 64}, seed=3)
    assert result.passed, result.report()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_view_as_complex_code_passes_composition(tmp_path, dtype):
    pytest.importorskip("torch")
    result = check(_write(tmp_path, "meta", META), {"head_dim": 64, "convention": "interleaved"}, array="torch",
                   dtype=dtype, seed=1, invariants=["rope.composition", "rope.linearity", "rope.conformance"])
    assert result.passed, result.report()


def test_only_rope_layout_hands_over_other_storage_and_says_which(tmp_path):
    """The same strict function in the bshd layout fails on a view, and the failure names the storage."""
    p = tmp_path / "strict_bshd.py"
    p.write_text(textwrap.dedent(STRICT).replace("def apply(x, positions):", "def _rows(x, positions):") + textwrap.dedent('''
        def apply(x, positions):
            if not x.flags.c_contiguous:
                raise ValueError(f"non-contiguous input: strides {x.strides}")
            b, s, h, d = x.shape
            rows = np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(-1, d)
            pos = np.ascontiguousarray(np.repeat(positions[:, None, :], h, axis=1).reshape(-1))
            return _rows(rows, pos).reshape(b, h, s, d).transpose(0, 2, 1, 3)
        '''))
    result = check(f"{p}:apply", {"head_dim": 32}, layout="bshd", seed=0, invariants=["rope.layout"])
    [r] = result.results
    assert r.status == "fail", result.report()
    assert "storage" in r.failure.evidence and "contiguous storage" not in r.failure.named(None).message, r.message
