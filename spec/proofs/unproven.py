"""The invariants with no proof: what the definition says (DEFINITION) or what only code can show (TESTED),
each with why and what checks it instead."""

from __future__ import annotations

from ropespec.spec.proofs.core import DEFINITION, TESTED, declare


declare("contract.input-unmodified", TESTED, "a property of code (does it write into the caller's array?); the definition "
                                         "returns a new vector and cannot say what code writes")
declare("contract.deterministic", TESTED, "a property of code (state, uninitialised memory, nondeterministic reductions); "
                                      "the definition is a function")
declare("contract.shape-finite", TESTED, "a property of code (what it returns, whether it returns); the definition's values "
                                     "are finite for finite x since |y_j| <= |x_a| + |x_b|")
declare("scaling.longrope-switch", DEFINITION, "LongRoPE's rule is the definition: short factors for seq_len <= L, long beyond, or "
                                           "by the served length under vLLM's policy (ropespec.spec.tables.table_variant); the property "
                                           "checks the implementation at L and L + 1")
declare("decode.consistency", TESTED, "a property of a decoder's cache: the definition has no cache. dynamic NTK's tables differ "
                                  "between lengths (scaling.dynamic-length), which is why cached keys can go stale")
declare("kernel.rotation", DEFINITION, "the rotation by a given cos and sin is the definition (ropespec.spec.definitions.rotate); the "
                                   "property checks the kernel against it, formed exactly")
declare("rope.layout", DEFINITION, "each row of each head is the apply function of its own position (rope.conformance's "
                               "definition); the property checks every row of a batched call against it")
declare("kernel.qk", DEFINITION, "as kernel.rotation: the rotation by a given table is the definition; the property "
                             "checks each head of q and k against it")
declare("table.angles", DEFINITION, "the table is the definition's cos and sin of p theta'_i times g (ropespec.spec.definitions.rotate "
                                "of (1, 0)); the property checks the builder against them")
declare("sinusoidal.conformance", DEFINITION, "PE(p) is defined by these values (ropespec.spec.definitions.pe_pair); the property checks "
                                          "the implementation against them")
declare("sinusoidal.length-independent", DEFINITION, "PE(p) = (sin p theta_i, cos p theta_i) has no term in the sequence "
                                                 "length; the property checks code that might normalise by it")
declare("position-ids.text", DEFINITION, "ropespec.spec.positions' rule gives a text token one position on every axis, one "
        "more than the token before; that M-RoPE at equal axes is 1-D RoPE is axes.text-reduction's proof")
declare("position-ids.grid", DEFINITION, "ropespec.spec.positions.block: a vision block's h and w are its start plus the merged "
        "grid's row and column, row-major")
declare("position-ids.time", DEFINITION, "ropespec.spec.positions.time_index: the model's clock (video_time), truncated as its "
        "code truncates; exact rationals, with float32's rounding under a whole number allowed (time_options)")
declare("position-ids.resume", DEFINITION, "ropespec.spec.positions.position_ids: every segment starts at one past the largest "
        "position so far")
declare("position-ids.batch", TESTED, "a property of the builder's code: how it reads its batch and its attention mask")
declare("position-ids.decode", TESTED, "a property of the builder's code: the decode position it carries (rope_deltas)")
declare("learned.in-range", TESTED, "a property of the table's code: every row below max_len is answered and finite")
declare("learned.out-of-range-raises", TESTED, "a property of the table's code: what it does past its last row")
declare("learned.parameter-count", DEFINITION, "a table of max_len rows of d parameters holds max_len x d of them")
declare("attention.values-unrotated", DEFINITION, "attention rotates q and k only (RoFormer eq. 16); the property checks that "
                                              "code does not rotate V")
declare("attention.query-temperature", DEFINITION, "the temperature is a definition (spec/definitions.py "
        "query_temperature); the property checks code's steps against it on both sides of each")
declare("attention.causal", DEFINITION, "the causal mask is out_i = sum over j <= i; the property checks code's mask")
declare("decode.attention-consistency", DEFINITION, "a step over the cached rows 0..t computes row t of the causal pass by "
                                                "definition; the property checks a decoder's cache and offsets")
declare("attention.grouped-query", DEFINITION, "query head h reads kv head h // (n_heads / n_kv_heads): the layout of "
                                           "transformers' repeat_kv, a convention")
declare("model.positions", TESTED, "a property of a model's code: which positions it hands its RoPE, recorded at the "
        "rotary and compared with the canonical ones as integers")
declare("model.padding", TESTED, "a property of a model's code: its mask and positions under left padding; the "
        "definition's attention of a row does not see other rows")
declare("model.cache", TESTED, "a property of a model's cache: the definition has no cache. Causal attention over cached "
        "keys at their positions is the full pass by definition (decode.attention-consistency)")
declare("model.canonical", DEFINITION, "the canonical positions are the definition's (a real token at the count of real "
        "tokens before it); the property checks the positions a model infers against them")
declare("model.stateless", TESTED, "a property of code (what a call leaves behind); the definition is a function")
declare("model.length", TESTED, "a property of a model's cache across a table that changes with the length: the "
        "definition's table at each length is scaling.longrope-switch's and scaling.dynamic-length's")
declare("model.packing", TESTED, "a property of a model's code: how it tells documents apart in one row (its mask "
        "and positions); the definition's attention of a document does not see another")
declare("model.window", TESTED, "a property of a model's code: which keys a sliding layer's mask keeps; the definition "
        "has no window")
declare("model.shift", TESTED, "a property of a model's cache: re-rotating a key by d is turning it at p + d by the "
        "rotation's group law (rope.relative-position's proof); the property checks code's shift against it")
declare("model.offset", TESTED, "a property of a whole model: each score depends on p_i - p_j alone by the rotation's "
        "group law (rope.relative-position's proof); the property checks that nothing else in the model reads the "
        "absolute positions")
declare("model.drafts", TESTED, "a property of a model's cache and generation loop: verifying drafts is causal "
        "attention over cached keys (decode.attention-consistency), and a rejected draft leaves nothing behind")
declare("model.shards", TESTED, "a property of a model's shard builder: which tokens each rank owns and their "
        "positions; the definition has one sequence")
