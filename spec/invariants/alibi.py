"""ALiBi's invariants."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 50

INVARIANTS = [
    Invariant(
        "alibi.slopes",
        "alibi",
        "Head h of H gets the slope m_h = 2^(-8 (h + 1) / H) when H is a power of two; otherwise the slopes of the "
        "closest power of two c below H, then every other slope of 2c from its first (alibi_bias_max in place of 8 "
        "where the expectation gives one), to within the rounding of the output dtype.",
        source="Press et al. (arXiv 2108.12409) and their get_slopes; MPT's gen_slopes (alibi_bias_max)",
    ),
    Invariant(
        "alibi.softmax-rows",
        "alibi",
        "Softmax over each row's keys (j <= i for a causal bias, every key for a symmetric one) is the reference's: "
        "the bias is -m_h (i - j) (or -m_h |i - j|) up to one constant per row, which softmax ignores, to within the "
        "error bound of the expectation's class.",
        source="Press et al. (arXiv 2108.12409), section 3; BLOOM's build_alibi_tensor adds m_h j (huggingface/"
               "transformers, models/bloom/modeling_bloom.py)",
    ),
    Invariant(
        "alibi.relative-position",
        "alibi",
        "The bias depends on i - j alone (up to a row constant): alibi(q + c, k + c) - alibi(q, k) is constant along "
        "each row, for every shift c.",
        source="Press et al. (arXiv 2108.12409): a bias of the query-key distance",
    ),
    Invariant(
        "alibi.per-head",
        "alibi",
        "In a batched call (the bhqk layout: positions (batch, n), the bias (batch, n_heads, n_q, n_k)) batch row b "
        "and head h get head h's slope over row b's own positions, as alibi.softmax-rows checks one sequence: rows "
        "with their own positions (left padding, different offsets) and heads are never mixed by a reshape or a "
        "broadcast.",
        source="BLOOM's build_alibi_tensor reshapes (batch, heads, seq) to (batch x heads, 1, seq) from the attention "
               "mask's cumulative sum (huggingface/transformers, models/bloom/modeling_bloom.py); flash-attention's "
               "alibi_slopes (batch, nheads)",
    ),
    Invariant(
        "alibi.precision",
        "alibi",
        "Up to max_position the bias stays within the bound of its class: the strict class (angle_dtype exact: "
        "formed from the distance, rounded once to the output dtype) admits u |m_h (i - j)|; the default float32 "
        "class also admits the rounding of m_h times the call's largest position, which a bias formed from the "
        "positions carries (BLOOM's m_h j, MPT's m_h (j - L + 1)).",
        source="BLOOM's build_alibi_tensor casts slope x position to the model's dtype (huggingface/transformers, "
               "models/bloom/modeling_bloom.py)",
    ),
]
