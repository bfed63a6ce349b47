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
        "of real tokens before it (left padding not counted), in a padded batch, in a prefill cut into chunks (each "
        "its own forward, or a loop inside one), at every decoding step and at every forward of the model's own "
        "generate, with the positions given and with them inferred.",
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
        "the original length (the model's own config's, where it says one): what the cache holds is recomputed where "
        "the table changes (transformers' re-prefill), never kept from the other table.",
        source="transformers #33129 (Phi-3: keys turned with the short factors kept after the switch to the long "
               "ones); vLLM #27414; transformers #25104 (dynamic NTK's base across the cache)",
    ),
    Invariant(
        "model.packing",
        "model",
        "Documents packed into one row, told apart by the model's own packing door (transformers' DataCollatorWithFlattening "
        "positions; a decoder's documents=), each give the logits of the document alone, every document's positions "
        "restarting at 0; and what is one sequence is never split into documents: a row whose positions start at an "
        "offset, a decoding step after a cache, and multi-axis ids whose vision block repeats a position give, without an "
        "attention mask, the logits they give with one.",
        source="pytorch/torchtitan #2559 and #2560 (positions never reset per document); transformers #32241 (a decoding "
               "step taken for packed) and #44911 (3-row M-RoPE ids taken for packed); transformers #39814",
    ),
    Invariant(
        "model.window",
        "model",
        "A sliding-window layer of window w lets a token see exactly w keys, itself included, and a global layer every "
        "earlier one: changing token j changes a layer's output at t only where t is within its window of a token whose "
        "input changed, in one prefill longer than w, in decoding steps past w from a cache, and in a left-padded row; a "
        "global layer's output changes with a token older than any window.",
        source="transformers #39408 and #40163 (a window one key too wide), #34093 and #37574 (the rolling cache at the "
               "window's boundary); vllm-project/vllm #51756 (global layers windowed); ml-explore/mlx-lm #390",
    ),
    Invariant(
        "model.shift",
        "model",
        "A cache re-rotated by a shift of d (a context shift: the model's own shift of its cached keys) equals the cache "
        "of keys turned at their positions plus d: the next token decoded at p + d has the logits it has after a "
        "prefill at positions shifted by d, partial rotary included (only the rotary dims turn).",
        source="ggml-org/llama.cpp #4889 (the K-shift re-rotating Phi-2's keys with the head dim of 80 where 32 dims "
               "rotate) and #8348",
    ),
    Invariant(
        "model.offset",
        "model",
        "Where the encoding is RoPE alone (no query temperature by position, a table that does not change with the "
        "length), a model's logits do not move when every position moves by a constant c: a prefill at c ... c + n - 1 "
        "and the token decoded after it at c + n give the logits of a prefill at 0 ... n - 1 and its token at n, every "
        "axis of a multi-axis RoPE moved alike. Positions alone never show a model that reads them elsewhere; its "
        "logits at two offsets do.",
        source="RoFormer (arXiv 2104.09864): a score depends on the positions' difference alone; seed tutorial 004 (a "
               "model converted to RoPE that kept its absolute position embeddings)",
    ),
    Invariant(
        "model.shards",
        "model",
        "Under context parallelism every token of a packed row is owned by exactly one rank, and each rank turns its "
        "tokens at their global positions in their own document, for contiguous and load-balanced (2 x cp chunks per "
        "document) sharding: checked on the model's own shard position builder.",
        source="NVIDIA/Megatron-LM #5243 (packed THD positions under context parallelism reusing sequence 0's) and "
               "#4075",
    ),
    Invariant(
        "model.drafts",
        "model",
        "Speculative and assisted decoding keep positions: k drafted tokens verified in one forward after a cache are "
        "turned at their own positions and have the logits of k single steps; the cache cut back to the j drafts "
        "accepted gives the next token the position and logits it has after those j tokens decoded one by one; and a "
        "model's assisted greedy generation, with a draft always accepted and with one nearly always rejected, over "
        "two verification rounds at least, appends the tokens of its greedy generation, each round's forward starting "
        "where the drafts accepted before it put it; and a row continued several times (a request's n samples, its "
        "rows expanded) decodes each copy at its source row's positions and appends its tokens.",
        source="transformers #30068 (cache_position advanced by one after several accepted tokens); sgl-project/sglang "
               "#25015 (draft positions one past their tokens); vllm-project/vllm #10350 (expanded rows without "
               "rope_deltas)",
    ),
]
