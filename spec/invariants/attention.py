"""Attention's invariants: what RoPE inside attention computes, whole and decoded with a KV cache."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 30

INVARIANTS = [
    Invariant(
        "attention.shift-invariance",
        "attention",
        "With RoPE, shifting every position by c leaves the attention output unchanged; with a query temperature "
        "tau(p), for the shifts that keep every query on its step of tau (tau(p + c) = tau(p)): the temperature "
        "breaks the invariance across its steps only.",
        source="RoFormer; seed tutorial 004",
    ),
    Invariant(
        "attention.query-temperature",
        "attention",
        "With a query temperature, query row i's scores are multiplied by tau(p_i) = 1 + beta ln(1 + floor((p_i + "
        "offset) / length)) after RoPE (offset 1: Llama 4's p + 1; 0: Mistral's p): on both sides of every step of "
        "tau the output is the exact attention with it.",
        source="transformers' llama4 (attn_temperature_tuning, floor_scale, attn_scale) and ministral3 "
               "(get_llama_4_attn_scale, llama_4_scaling_beta)",
    ),
    Invariant(
        "attention.permutation-equivariance",
        "attention",
        "Without a causal mask, permuting the rows (with their positions) permutes the output the same "
        "way.",
        source="attention without positions is permutation-equivariant (Vaswani et al. 2017)",
    ),
    Invariant(
        "attention.values-unrotated",
        "attention",
        "V is never rotated: only Q and K carry positions.",
        source="RoFormer (arXiv 2104.09864) eq. 16: only q and k are rotated; seed tutorial 004 (V is not "
               "rotated); transformers' apply_rotary_pos_emb(q, k, cos, sin); flash-attention's rotary "
               "tests",
    ),
    Invariant(
        "attention.causal",
        "attention",
        "With the causal mask, row i of the output does not depend on rows after i.",
        source="the causal mask of decoder attention",
    ),
    Invariant(
        "attention.grouped-query",
        "attention",
        "With n_heads query heads and n_kv_heads key/value heads, query head h attends with key/value "
        "head h // (n_heads / n_kv_heads), each head being the exact RoPE attention.",
        source="GQA (Ainslie et al. 2023); transformers' repeat_kv",
    ),
    Invariant(
        "decode.attention-consistency",
        "decode",
        "Attention decoded with a KV cache (prefill, then one step per token) gives, at every step, the "
        "output row of the full causal pass over the sequence so far.",
        source="executorch PR #2010 (frequencies not sliced to start_pos); rotary-embedding-torch #11 "
               "(offset missing); transformers #22161 (positions not derived from the mask)",
    ),
]
