"""T5's relative-position buckets' invariants."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 60

INVARIANTS = [
    Invariant(
        "t5-bias.conformance",
        "t5-bias",
        "bucket(d) is T5's bucket of the relative position d = j - i, exactly, for every d (where the log-spaced "
        "value lies within float32's error of an integer, T5's float32 log makes either neighbour its answer).",
        source="Raffel et al. (arXiv 1910.10683); transformers' T5Attention._relative_position_bucket",
    ),
    Invariant(
        "t5-bias.exact-below",
        "t5-bias",
        "Distances below max_exact = n / 2 (n the buckets of one sign) each get a bucket of their own: "
        "bucket(d) = offset + |d|.",
        source="transformers' T5Attention._relative_position_bucket (is_small)",
    ),
    Invariant(
        "t5-bias.saturates",
        "t5-bias",
        "Every distance at or past max_distance lands in the last bucket of its sign, and every bucket lies in "
        "[0, num_buckets).",
        source="transformers' T5Attention._relative_position_bucket (the min with num_buckets - 1)",
    ),
    Invariant(
        "t5-bias.monotone",
        "t5-bias",
        "On each side of the query, the bucket never decreases as the distance grows.",
        source="Raffel et al. (arXiv 1910.10683): buckets widen logarithmically with the distance",
    ),
    Invariant(
        "t5-bias.sign-split",
        "t5-bias",
        "Bidirectional: keys after the query (d > 0) use the upper half of the buckets, offset by num_buckets / 2, "
        "and keys at or before it the lower half; unidirectional: every key after the query is bucket 0.",
        source="transformers' T5Attention._relative_position_bucket (bidirectional)",
    ),
    Invariant(
        "t5-bias.lookup",
        "t5-bias",
        "The bias lookup gives each head h, query i and key j the table's entry of head h at T5's bucket of j - i: "
        "the relative position key - query (a decoding step's query at its own position), each head its own "
        "column of the table; its buckets, read off through a table of their own numbers, hold every bucket "
        "invariant.",
        source="transformers' T5Attention.compute_bias (memory_position - context_position, past_seen_tokens); "
               "Raffel et al. (arXiv 1910.10683)",
    ),
]
