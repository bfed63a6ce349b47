"""A test file as it would sit in your own repository: the ropespec pytest plugin (installed with
ropespec) provides the ``rope_check`` fixture. Run: ``pytest examples/test_rope.py``."""

import pytest

torch = pytest.importorskip("torch")


def my_rope(x, positions):
    """The kernel under test: transformers' Llama recipe in torch (float32 angles, rotate_half)."""
    d = x.shape[-1]
    inv_freq = 1.0 / (500000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = positions.float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_my_rope(rope_check, dtype):
    rope_check(my_rope, expect={"head_dim": 128, "rope_theta": 500000}, array="torch", dtype=dtype,
               invariants=["rope.conformance", "rope.relative-position", "contract.input-unmodified"])
