"""transformers' positional-bias code as factories for the expectation: BLOOM's and Falcon's
``build_alibi_tensor(attention_mask, num_heads, dtype)`` and MPT's ``build_mpt_alibi_tensor(num_heads,
sequence_length, alibi_bias_max)``, which the alibi family calls in their own signatures as their models call them
(each is also a TARGET as it is: ``transformers.models.bloom.modeling_bloom:build_alibi_tensor --family alibi``);
the factories add what the functions cannot say: they are causal (a symmetric expectation is declined) and need
torch. ``t5`` is T5's bias lookup, ``T5Attention.compute_bias``, as lookup(table, q_positions, k_positions,
bidirectional, max_distance); T5's bucket function needs no adapter
(``transformers.models.t5.modeling_t5:T5Attention._relative_position_bucket --family t5-bias``).

    ropespec check ropespec.implementations.adapters.hf_biases:bloom --family alibi --array torch --dtype bfloat16

Needs ``transformers`` and ``torch`` (``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import importlib
import importlib.util

ARRAY = "torch"


def _causal(expect) -> None:
    """Declines what transformers' ALiBi does not compute: a symmetric bias, or any without torch."""
    if expect.params("alibi").bias_symmetric:
        raise NotImplementedError("transformers' ALiBi is causal (a decoder's): no symmetric bias")
    if importlib.util.find_spec("torch") is None:
        raise NotImplementedError("torch is not installed (pip install -e '.[hf]')")


def _module(name: str):
    try:
        return importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None


def bloom(expect):
    """BLOOM's build_alibi_tensor(attention_mask, num_heads, dtype), called as BLOOM calls it (the alibi family's
    mask form: a left-padded mask, the result read through its (batch x heads, 1, seq) reshape)."""
    _causal(expect)
    return _module("bloom").build_alibi_tensor


def falcon(expect):
    """Falcon's build_alibi_tensor (Falcon-RW's ALiBi, copied from BLOOM's), called as Falcon calls it."""
    _causal(expect)
    return _module("falcon").build_alibi_tensor


def mpt(expect):
    """MPT's build_mpt_alibi_tensor(num_heads, sequence_length, alibi_bias_max) (the alibi family's length form,
    with the expectation's alibi_bias_max)."""
    _causal(expect)
    return _module("mpt").build_mpt_alibi_tensor


def t5(table, q_positions, k_positions, bidirectional=True, max_distance=128):
    """T5's bias lookup, ``T5Attention.compute_bias``, with ``table`` (num_buckets, n_heads) as its learned
    ``relative_attention_bias`` weight: an encoder's attention (bidirectional) or a decoder's, the queries a span
    from the first one's position on (``past_seen_tokens``, a cached decoding step's offset), read back at the
    positions asked for."""
    torch = importlib.import_module("torch")
    m = _module("t5")
    num_buckets, n_heads = table.shape
    config = m.T5Config(d_model=8, d_kv=4, num_heads=int(n_heads), relative_attention_num_buckets=int(num_buckets),
                        relative_attention_max_distance=int(max_distance), is_decoder=not bidirectional)
    attention = m.T5Attention(config, has_relative_attention_bias=True, layer_idx=0).to(table.dtype)
    first = int(q_positions.min())
    with torch.no_grad():
        attention.relative_attention_bias.weight.copy_(table)
        bias = attention.compute_bias(int(q_positions.max()) - first + 1, int(k_positions.max()) + 1,
                                      past_seen_tokens=first)[0]
    return bias[:, (q_positions - first).long()][:, :, k_positions.long()]


__all__ = ["bloom", "falcon", "mpt", "t5"]
