"""transformers' own Llama rotary code (LlamaRotaryEmbedding + apply_rotary_pos_emb) as a factory.

    ropespec check implementations.adapters.hf:make --array torch --dtype bfloat16 --expect llama3.1-8b

Needs ``transformers`` (``pip install transformers``); without it the factory declines. The
expectation becomes a LlamaConfig (``rope_parameters`` in transformers 5.x words). Llama pairs
"half" and rotates every dim, so other expectations are declined. Everything transformers does is
kept: float32 inverse frequencies and angles, cos/sin cast to x's dtype, and for ``dynamic`` its
cached, stateful table (the behaviour behind transformers #25104).
"""

from __future__ import annotations

ARRAY = "torch"


def config_for(expect):
    """A transformers LlamaConfig computing ``expect``'s frequencies (raises ImportError without transformers)."""
    from transformers import LlamaConfig

    params = {"rope_type": expect.rope_type, "rope_theta": expect.rope_theta}
    if expect.rope_scaling:
        params.update({k: v for k, v in expect.to_dict()["rope_scaling"].items() if k != "rope_type"})
    max_pos = expect.max_position
    if expect.rope_type == "dynamic" and "original_max_position_embeddings" in params:
        # transformers' dynamic NTK grows past max_position_embeddings (it reads no original length)
        max_pos = params.pop("original_max_position_embeddings")
    if expect.rotary_dim != expect.head_dim:
        params["partial_rotary_factor"] = expect.rotary_dim / expect.head_dim
    return LlamaConfig(hidden_size=expect.head_dim, num_attention_heads=1, num_key_value_heads=1,
                       head_dim=expect.head_dim, max_position_embeddings=max_pos, rope_parameters=params)


def make(expect):
    try:
        import torch
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install transformers)") from None
    if expect.convention != "half":
        raise NotImplementedError("transformers' Llama code pairs half, not interleaved")
    if expect.rotary_dim != expect.head_dim:
        raise NotImplementedError("transformers' Llama code rotates every dim (no partial rotary)")
    if expect.rope_type == "ntk":
        raise NotImplementedError("transformers has no static 'ntk' rope type")
    rotary = LlamaRotaryEmbedding(config_for(expect))

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        q = x[None, None]  # (batch 1, heads 1, n, head_dim)
        with torch.no_grad():
            cos, sin = rotary(q, positions[None])
            out, _ = apply_rotary_pos_emb(q, q, cos, sin)
        return out[0, 0]

    return rope
