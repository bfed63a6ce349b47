"""A whole model's positional plumbing: the positions it hands its RoPE and what its caches keep
(shared/design/PLUMBING.md)."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 60

INVARIANTS = [
    Invariant(
        "model.positions",
        "model",
        "The positions a model hands its RoPE are the canonical ones, exactly: each real token of a row at the number "
        "of real tokens before it (left padding not counted), in a padded batch, in a prefill cut into chunks and at "
        "every decoding step, with the positions given and with them inferred.",
        source="unsloth #3699, PR #4100 (cache_position as every row's position_ids under left padding); "
               "transformers #22161; mlx-vlm #1755 and #1983 (every decoded token at position 0); vLLM #10388 and "
               "#10403 (chunked prefill offsets)",
    ),
    Invariant(
        "model.padding",
        "model",
        "A row's logits do not depend on its left padding or on the other rows of its batch: its real tokens' logits "
        "in a padded batch equal those of the row alone, through prefill and decoding steps.",
        source="transformers #22161 and test_left_padding_compatibility (no cache, last token only); fla #902",
    ),
    Invariant(
        "model.cache",
        "model",
        "Any schedule (a prefill then one-token steps; chunks of 1, 2, 3 and more) gives, at every token, the logits "
        "of one full forward of the whole sequence.",
        source="transformers #43082 (chunked prefill and cache offsets); vLLM #10388 and #10403",
    ),
    Invariant(
        "model.canonical",
        "model",
        "A forward with its positions inferred equals the forward given the canonical positions explicitly, and, "
        "where the model takes its tokens' embeddings (inputs_embeds), the forward given them equals the forward "
        "given their ids: the logits and the positions its RoPE receives are the same.",
        source="transformers test_generate_with_and_without_position_ids (skipped for every model with get_rope_index); "
               "transformers #35466 (inputs_embeds)",
    ),
    Invariant(
        "model.stateless",
        "model",
        "A call does not depend on an earlier one: a call (a prefill and its decoding steps) after a call of another "
        "batch, of another size and its rows padded otherwise, runs and equals the same call on a fresh model, its "
        "positions exactly and its logits, and no buffer or attribute of the model (a position counter, a cached "
        "table, rope_deltas) is left changed by a call, but the cache the caller holds; where the model has a "
        "generate of its own, its greedy generation of a batch after one of another batch appends the tokens it "
        "appends once on a fresh model.",
        source="transformers #36013 and #43952 (rope_deltas of an earlier call reused); transformers #25306 (a "
               "dynamic NTK table kept across calls)",
    ),
    Invariant(
        "model.length",
        "model",
        "Where the RoPE depends on the sequence's length (LongRoPE's short and long factors, dynamic NTK's base), a "
        "token decoded with a cache has the logits of one full forward of the sequence up to it, before, at and after "
        "the original length: what the cache holds is recomputed where the table changes (transformers' re-prefill), "
        "never kept from the other table.",
        source="transformers #33129 (Phi-3: keys turned with the short factors kept after the switch to the long "
               "ones); vLLM #27414; transformers #25104 (dynamic NTK's base across the cache)",
    ),
]
