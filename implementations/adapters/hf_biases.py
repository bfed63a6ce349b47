"""transformers' ALiBi code as alibi(n_heads, q_positions, k_positions) factories: BLOOM's and Falcon's
``build_alibi_tensor(attention_mask, num_heads, dtype)`` and MPT's ``build_mpt_alibi_tensor(num_heads,
sequence_length, alibi_bias_max)``, called as their models call them.

    ropespec check implementations.adapters.hf_biases:bloom --family alibi --array torch --dtype bfloat16

Each builds one bias per key, slope x position from the start (BLOOM, Falcon: the attention mask's cumulative sum
minus one) or from the end (MPT: slope x (j - L + 1)), and leaves the query to softmax's row shift; the factory reads
the keys' entries off a sequence long enough for every key and hands them to every query, as their attention adds
them. Causal only: a symmetric expectation is declined. T5's bucket function needs no adapter: it is a plain function
of its arguments (``transformers.models.t5.modeling_t5:T5Attention._relative_position_bucket --family t5-bias``).
Needs ``transformers`` and ``torch`` (``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import importlib

ARRAY = "torch"


def _per_key(expect, build):
    """alibi(n_heads, q, k) from ``build(n_heads, length, torch dtype)`` -> (n_heads, length), one bias per key."""
    if expect.bias_symmetric:
        raise NotImplementedError("transformers' ALiBi is causal (a decoder's): no symmetric bias")
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise NotImplementedError("torch is not installed (pip install -e '.[hf]')") from None
    dtype = getattr(torch, expect.dtype)

    def alibi(n_heads, q_positions, k_positions):
        length = int(max(int(q_positions.max()), int(k_positions.max()))) + 1
        with torch.no_grad():
            per_key = build(int(n_heads), length, dtype)[:, k_positions.long()]
        return per_key[:, None, :].expand(int(n_heads), len(q_positions), len(k_positions))

    return alibi


def _module(name: str):
    try:
        return importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None


def bloom(expect):
    """BLOOM's build_alibi_tensor on an all-ones attention mask, in the expectation's dtype (as BLOOM casts it)."""
    m = _module("bloom")
    torch = importlib.import_module("torch")
    return _per_key(expect, lambda h, n, dtype: m.build_alibi_tensor(torch.ones(1, n), h, dtype)[:, 0, :])


def falcon(expect):
    """Falcon's build_alibi_tensor (Falcon-RW's ALiBi, copied from BLOOM's), in the expectation's dtype."""
    m = _module("falcon")
    torch = importlib.import_module("torch")
    return _per_key(expect, lambda h, n, dtype: m.build_alibi_tensor(torch.ones(1, n), h, dtype)[:, 0, :])


def mpt(expect):
    """MPT's build_mpt_alibi_tensor with the expectation's alibi_bias_max (float32, as MPT leaves it)."""
    m = _module("mpt")
    return _per_key(expect, lambda h, n, dtype: m.build_mpt_alibi_tensor(h, n, expect.alibi_bias_max)[:, 0, :])


__all__ = ["bloom", "falcon", "mpt"]
