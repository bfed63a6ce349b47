"""transformers' ALiBi code as alibi(n_heads, q_positions, k_positions) factories: BLOOM's and Falcon's
``build_alibi_tensor(attention_mask, num_heads, dtype)`` and MPT's ``build_mpt_alibi_tensor(num_heads,
sequence_length, alibi_bias_max)``, called as their models call them.

    ropespec check implementations.adapters.hf_biases:bloom --family alibi --array torch --dtype bfloat16

Each builds one bias per key, slope x position from the start (BLOOM, Falcon: the attention mask's cumulative sum
minus one) or from the end (MPT: slope x (j - L + 1)), and leaves the query to softmax's row shift; the factory reads
the keys' entries off a sequence long enough for every key and hands them to every query, as their attention adds
them. BLOOM's and Falcon's take a batch too (``--layout bhqk``): each row left-padded in the attention mask, the
bias read back through their reshape to (batch x heads, 1, seq). Causal only: a symmetric expectation is declined. T5's bucket function needs no adapter: it is a plain function
of its arguments (``transformers.models.t5.modeling_t5:T5Attention._relative_position_bucket --family t5-bias``).
Needs ``transformers`` and ``torch`` (``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import importlib

ARRAY = "torch"


def _causal_torch(expect):
    """(torch, the expectation's torch dtype); declines a symmetric expectation and a machine without torch."""
    if expect.bias_symmetric:
        raise NotImplementedError("transformers' ALiBi is causal (a decoder's): no symmetric bias")
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise NotImplementedError("torch is not installed (pip install -e '.[hf]')") from None
    return torch, getattr(torch, expect.dtype)


def _per_key(expect, build):
    """alibi(n_heads, q, k) from ``build(n_heads, length, torch dtype)`` -> (n_heads, length), one bias per key."""
    torch, dtype = _causal_torch(expect)

    def alibi(n_heads, q_positions, k_positions):
        length = int(max(int(q_positions.max()), int(k_positions.max()))) + 1
        with torch.no_grad():
            per_key = build(int(n_heads), length, dtype)[:, k_positions.long()]
        return per_key[:, None, :].expand(int(n_heads), len(q_positions), len(k_positions))

    return alibi


def _per_mask(expect, build):
    """alibi(n_heads, q, k) from ``build(attention_mask (batch, T), n_heads, torch dtype) -> (batch x n_heads, 1, T)``,
    BLOOM's own call: each batch row left-padded so that its last real token is at the row's largest position (its
    real tokens at 0, 1, ..., as the mask's cumulative sum counts them), the bias read back as BLOOM's attention
    reads it, (batch, n_heads, T). One sequence (positions (n,)) is a batch of one; positions (batch, n) are the
    bhqk layout."""
    torch, dtype = _causal_torch(expect)

    def alibi(n_heads, q_positions, k_positions):
        one = q_positions.dim() == 1
        q, k = (q_positions[None], k_positions[None]) if one else (q_positions, k_positions)
        lengths = torch.maximum(q.max(dim=1).values, k.max(dim=1).values).long() + 1
        total = int(lengths.max())
        pads = total - lengths
        mask = (torch.arange(total)[None, :] >= pads[:, None]).long()  # left padding: zeros, then the real tokens
        with torch.no_grad():
            per_key = build(mask, int(n_heads), dtype).reshape(len(q), int(n_heads), total)
            got = torch.gather(per_key, 2, (k.long() + pads[:, None])[:, None, :].expand(-1, int(n_heads), -1))
        out = got[:, :, None, :].expand(len(q), int(n_heads), q.shape[1], k.shape[1])
        return out[0] if one else out

    return alibi


def _module(name: str):
    try:
        return importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None


def bloom(expect):
    """BLOOM's build_alibi_tensor on a left-padded attention mask, in the expectation's dtype (as BLOOM casts it)."""
    m = _module("bloom")
    return _per_mask(expect, m.build_alibi_tensor)


def falcon(expect):
    """Falcon's build_alibi_tensor (Falcon-RW's ALiBi, copied from BLOOM's), in the expectation's dtype."""
    m = _module("falcon")
    return _per_mask(expect, m.build_alibi_tensor)


def mpt(expect):
    """MPT's build_mpt_alibi_tensor with the expectation's alibi_bias_max (float32, as MPT leaves it)."""
    m = _module("mpt")
    return _per_key(expect, lambda h, n, dtype: m.build_mpt_alibi_tensor(h, n, expect.alibi_bias_max)[:, 0, :])


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
