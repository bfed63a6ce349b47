"""The words ropespec uses, each for one concept, in its code, on its command line and in README.

* **implementation**: the code under test, at one array library and dtype (a ``TARGET`` names where it is).
* **family**: what an implementation computes (one class each, :mod:`ropespec.spec.families`; its word and meaning are
  :func:`ropespec.spec.families.words`).
* **form**: which function of a family it is, and so how it is called (:data:`FORMS`).
* **layout**: how an apply function takes its rows: the axes of a batched call (:data:`LAYOUTS`).
* **mode**: what TARGET is: the function itself, a factory of functions, or a factory of decoders (:data:`MODES`).
* **axis**: one coordinate of a multi-axis RoPE's position vector (t, h, w); **section**: the pairs of one axis
  (``mrope_section``); **ladder**: the frequencies theta^(-2i/R) the pairs turn at, shared or one per axis.
* **convention**: which dims of the rotary dims turn together and where their results are written
  (``ropespec.spec.expectation.CONVENTIONS``: half, interleaved, rope_interleave). Two dims that turn together are a pair.
* **call shape**: family, form, layout, in place and the table TARGET, together (``ropespec.implementations.shape``).
* **diagnosis**: the word a failure carries, from the fixed vocabulary :data:`DIAGNOSES`.
* **kind** is kept for one thing only: the kind of a proof (``ropespec.spec.proofs.KINDS``).

Scripts depend on these strings: a word is added, never renamed.
"""

from __future__ import annotations

from ropespec.spec import layouts

#: which function of the rope family an implementation is (``--form``); every other family has one form, apply
FORMS: dict[str, str] = {
    "apply": "the encoding applied: f(x, positions), or the family's own signature",
    "table": "a cos/sin table builder: table(positions) -> (cos, sin)",
    "kernel": "an apply kernel handed its table: kernel(x, cos, sin)",
    "qk": "transformers' apply(q, k, cos, sin) -> (q_embed, k_embed)",
    "vllm": "vLLM's forward(positions, query, key) -> (query, key), heads flattened",
    "complex": "Meta's and DeepSeek's apply_rotary_emb(xq, xk, freqs_cis) -> (xq_out, xk_out), freqs_cis = cos + i sin "
               "per pair, q and k (batch, seq, heads, head_dim) or with --layout bhsd",
}

#: how an apply function takes its rows (``--layout``): the layouts' registry (ropespec.spec.layouts) says them
LAYOUTS: dict[str, str] = {n: layouts.REGISTRY[n].means for n in layouts.chosen()}

#: what the positions of a packed (thd) call are (``--positions``)
POSITIONS: dict[str, str] = {
    "per-sequence": "one offset per sequence: token j of sequence i is at offsets[i] + j - cu_seqlens[i] (flash-attention)",
    "per-token": "one position per token (FlashInfer's apply_rope_pos_ids, transformers' packed position_ids)",
}

#: what TARGET is, fixed when it is loaded
MODES: dict[str, str] = {
    "plain": "the function itself, computing one expectation",
    "factory": "make(expect) -> the function, for every expectation ropespec draws",
    "decoder": "make(expect) -> an object with prefill and step (a KV-cache decoder)",
}

#: the fixed vocabulary of diagnoses: the word a failure carries, and what it means
DIAGNOSES: dict[str, str] = {
    "convention": "the wrong dims turn together",
    "layout": "the right values are read from or written to the wrong place (dims, heads, batch rows, tokens)",
    "base": "the frequencies are another base's ladder, or the ladder's index is shifted",
    "double-rotation": "every pair turns by twice its angle",
    "position-offset": "positions are shifted by a constant, or wrap around a table",
    "direction": "every pair turns the other way",
    "scaling": "the frequencies are not the configured length-extension method's",
    "attention-factor": "every pair comes out scaled by another factor than the method's attention factor",
    "rotary-dim": "another number of dims rotates than rotary_dim, or they start at another dim than rotary_start (or the "
                  "exponent is normalised by another dim: head_dim for the rotary dim, or for each axis's own dims)",
    "not-a-rotation": "the output is not a rotation of pairs of the input",
    "angle-precision": "the angles or tables are computed in too low a precision for the promised class",
    "detached": "autograd does not see the rotation: the rotary dims' gradient is the upstream gradient unrotated, or "
                "zero (a kernel launched outside an autograd.Function)",
    "non-finite": "the output holds NaN or infinity",
    "tile-boundary": "rows past a point of a long call are wrong while the same rows are right in a short call: a "
                     "kernel's tiles, or the mask of its last tile",
    "shape": "the result is not an array of the right kind, dtype or shape",
    "exception": "a call raised",
    "timeout": "a call did not return within --timeout",
    "crash": "the process ended: an exit, a signal, or running out of memory",
    "input-mutated": "a call wrote into an argument (or outside what it may write in place)",
    "nondeterministic": "two calls on the same input differ",
    "bias": "an additive encoding plus a constant",
    "scale": "an additive encoding times a constant",
    "length-leak": "the encoding of a position depends on the call's other positions",
    "causal-mask": "attention ignores the causal mask",
    "values-rotated": "attention rotates the values",
    "absolute-position": "attention scores depend on absolute positions (an additive encoding)",
    "query-temperature": "the queries' temperature by position is not the expectation's: missing, put where there is "
                         "none, stepping one position early or late (floor(p / L) for floor((p + 1) / L)), or another "
                         "beta or step",
    "nope": "an attention layer turns q and k where the expectation's layer has no RoPE (NoPE: Llama 4's no_rope_layers), "
            "or turns neither where it has RoPE",
    "axes-chunked": "pairs are dealt to the axes in chunks where the expectation interleaves them (Qwen3-VL)",
    "axes-interleaved": "pairs are dealt to the axes interleaved where the expectation has them in chunks",
    "axes-sections": "an axis turns other pairs than its section: sections in another order or of other sizes",
    "axes-swapped": "two axes' positions are read in each other's place",
    "axis-ignored": "one axis turns no pair: its positions are ignored or another axis's are read in its place",
    "axis-offset": "one axis's positions are shifted by a constant (a 1-based grid)",
    "ladder-per-axis": "each axis restarts its own ladder where the expectation shares one ladder over the pairs",
    "ladder-shared": "one ladder runs over every pair where each axis should have its own",
    "time-collapsed": "a video's frames all get one temporal position (seconds truncated to whole numbers first)",
    "image-time-scaled": "a still image's temporal position is scaled by the video clock (the start multiplied by "
                         "tokens_per_second)",
    "resume-offset": "the tokens after a vision block do not start at one past the largest position used so far (the "
                     "token count, or the grid's spatial extent, instead)",
    "vision-as-text": "a vision block gets consecutive text positions instead of its grid's",
    "padding-shift": "left padding moves the real tokens' positions (the pads are counted)",
    "decode-restart": "decoding does not continue at one past the prefill's largest position (rope_deltas dropped)",
    "cache-offset": "the tokens after a cached prefix do not continue its positions: a decoding step or a prefill's "
                    "chunk restarts, stays or skips (the cache offset not added, or added twice)",
    "stale-state": "a call depends on an earlier call: a position counter, a cached table or rope_deltas the model "
                   "kept",
    "document-positions": "a packed document's positions do not restart at 0: they continue the documents before it "
                          "(or restart where no document starts)",
    "packing-mask": "a packed document attends to another document's tokens",
    "taken-for-packed": "one sequence is split into documents: a row starting at an offset, a decoding step or "
                        "multi-axis ids whose vision block repeats a position, without an attention mask",
    "draft-positions": "drafted tokens verified in one forward, or the token after the accepted ones, are turned at "
                       "other positions than their own (one past, or the accepted drafts not counted)",
    "expanded-positions": "a row continued several times (a request's n samples) decodes a copy at another row's "
                          "positions: the rows expanded without their offsets (rope_deltas)",
    "window-reach": "a layer sees another number of keys than its window (w keys, itself included), or a global layer "
                    "is windowed",
    "kv-shift": "cached keys re-rotated by d differ from keys turned at their positions plus d",
    "shard-positions": "a context-parallel rank turns its tokens at other than their global positions in their own "
                       "document, or a token is owned by no rank or by two",
    "padding-mask": "a row's real tokens attend to its left padding: the attention mask's pads are not excluded",
    "slopes": "ALiBi's slopes follow another rule: a head count that is no power of two given the geometric rule of "
              "one, or another bias max",
    "slope-order": "ALiBi's slopes are the rule's, in another order across heads (reversed)",
    "bias-sign": "the bias grows with the distance instead of falling: its sign is flipped",
    "one-sided": "a causal bias -m (i - j) where the symmetric -m |i - j| was meant: keys after the query are favoured",
    "bias-precision": "the bias is formed in too low a precision for the promised class: its rounding grows with the "
                      "absolute position (the slope times the key's position, rounded), not with the distance",
    "bucket-boundary": "a bucket boundary is off by one: the exact buckets end a distance early or late",
    "halves-swapped": "bidirectional buckets: keys after the query get the buckets of keys before it (the distance "
                      "taken as query - key)",
    "bucket-range": "a distance past max_distance does not land in the last bucket, or a bucket outside the range",
    "xpos-scale": "xPos's query and key scales do not cancel at equal positions: the keys scaled like the queries, or "
                  "the two exponents centred at different positions",
    "xpos-decay": "xPos's decay is another one: the other way, another scale_base, or another zeta",
    "unknown": "nothing measured fits",
}


def check_word(word: str | None) -> str | None:
    """``word`` when it is a diagnosis of the vocabulary (or None); ValueError otherwise: a word outside it is
    ropespec's own mistake, and scripts that read the words would not know it."""
    if word is not None and word not in DIAGNOSES:
        raise ValueError(f"{word!r} is not a diagnosis of the vocabulary (ropespec.spec.glossary.DIAGNOSES)")
    return word
