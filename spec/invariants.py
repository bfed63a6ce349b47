"""The invariant registry: every invariant the suite checks, stated once.

Each entry has a stable id (scripts and reports depend on it), the spec section it belongs to
(properties/test_<section>.py checks it), a one-sentence statement and where it comes from. Everything else about
an invariant is declared by its owner and names the id: its proof (``ropespec.spec.proofs``), the properties that check it
and the tolerance rule they apply (``properties``), the forms that answer it (``ropespec.implementations.families``), the zoo
members that fail it (``ropespec.implementations.zoo``); ``ropespec.properties.facts`` gathers them into one record.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Invariant:
    id: str
    section: str
    statement: str
    #: where it comes from: the paper, the seed tutorials (shared/seeds), or the public bug reports and code that
    #: motivated checking it
    source: str = ""
    #: a documented non-invariant: why every implementation of its families is expected to fail it
    expected_to_fail: str = ""


_ENTRIES = [
    Invariant(
        "rope.conformance",
        "conformance",
        "Each pair (x_a, x_b) of the rotary dims is rotated by the angle p * theta_i with theta_i = "
        "rope_theta^(-2i/rotary_dim), to within the error bound of the expectation's precision class (multi-axis "
        "RoPE: p is the position on the pair's own axis, theta_i its ladder's frequency).",
        source="RoFormer (Su et al., arXiv 2104.09864), eq. 34; seed tutorial 004",
    ),
    Invariant(
        "rope.norm-per-pair",
        "rotation",
        "The rotation preserves the Euclidean norm of every pair: ||f(x, p)_pair|| = ||x_pair||.",
        source="RoFormer section 3.4.2; seed tutorial 004 (rotations keep lengths)",
    ),
    Invariant(
        "rope.relative-position",
        "rotation",
        "Scores depend only on the position difference: <f(q, m), f(k, n)> = <f(q, m + c), f(k, n + c)> "
        "for every shift c (multi-axis RoPE: position vectors, shifted along one axis or several at once).",
        source="RoFormer eq. 16; seed tutorial 004 (gap 2 at starts 3, 10, 100, 4000)",
    ),
    Invariant(
        "rope.identity-at-zero",
        "rotation",
        "At position 0 (every axis at 0) the encoding is the identity: f(x, 0) = x.",
        source="RoFormer: R(0) = I",
    ),
    Invariant(
        "rope.composition",
        "rotation",
        "Rotations compose by adding positions (vectors, for multi-axis RoPE): f(f(x, a), b) = f(x, a + b).",
        source="llama.cpp's composition test rope(rope(x, 100 + i), -67) = rope(x, 33 + i)",
    ),
    Invariant(
        "rope.linearity",
        "structure",
        "The encoding is linear in x: f(alpha x + beta y, p) = alpha f(x, p) + beta f(y, p).",
        source="RoFormer: RoPE is a matrix multiplication",
    ),
    Invariant(
        "rope.locality",
        "structure",
        "Each output pair depends only on its own input pair, under the expectation's convention.",
        source="nanotron PR #427, vLLM #49290, flash-attention #288 (conventions mixed up)",
    ),
    Invariant(
        "rope.partial-passthrough",
        "structure",
        "Dims at and beyond rotary_dim, and the pairs the scaling method gives frequency 0 (proportional RoPE's past "
        "partial_rotary_factor), pass through bit-exactly unchanged.",
        source="pie PR #603, maxtext #4616, vLLM PR #41185 (partial rotary); transformers' proportional RoPE (Gemma 4)",
    ),
    Invariant(
        "axes.separation",
        "axes",
        "A move along one axis turns only that axis's pairs: f(x, p + c e_a) and f(x, p) agree on every pair of "
        "another axis.",
        source="MNN #4133, mlx-vlm #576, sglang #35744 (pairs read from the wrong axis, h/w rows dropped)",
    ),
    Invariant(
        "axes.text-reduction",
        "axes",
        "With a shared ladder (mrope_section, axes_parity aside), a token at one position m on every axis gets 1-D "
        "RoPE: f(x, (m, ..., m)) = RoPE(x, m).",
        source="Qwen2-VL (arXiv 2409.12191) section 2.1: text tokens get equal t, h, w ids, M-RoPE then equals 1-D RoPE",
    ),
    Invariant(
        "axes.one-axis",
        "axes",
        "With per-axis ladders, a token at 0 on every axis but a gets, on a's pairs, 1-D RoPE with a's own ladder "
        "rope_theta^(-2k/d_a), and the identity on every other pair.",
        source="diffusers FluxPosEmbed and get_1d_rotary_pos_embed (one 1-D RoPE per axis, concatenated); diffusers "
               "#12538 (Wan's axis dims that do not add up)",
    ),
    Invariant(
        "axes.equal-axes-differ",
        "axes",
        "With per-axis ladders, equal positions on every axis do not give 1-D RoPE: each axis restarts its ladder, so "
        "text-only checks of such code prove nothing about its rotation.",
        source="diffusers FluxPosEmbed (each axis's ladder normalised by its own dims)",
        expected_to_fail="each axis's ladder restarts at theta^0, so equal positions on every axis are not one "
                         "position of a 1-D ladder",
    ),
    Invariant(
        "contract.input-unmodified",
        "contract",
        "The caller's input array is not modified.",
        source="flash-attention's tests (input untouched when not in place)",
    ),
    Invariant(
        "contract.deterministic",
        "contract",
        "The same input gives the same output, bit for bit.",
        source="fla PR #967 (uninitialised output)",
    ),
    Invariant(
        "contract.shape-finite",
        "contract",
        "Every call returns, within the time limit and without ending its process, an array of the "
        "input's kind, shape and dtype (real floating point), and every value is finite.",
        source="nanochat PR #520, pegainfer #220 (positions beyond the table)",
    ),
    Invariant(
        "scaling.bounded",
        "scaling",
        "Every scaled frequency lies between theta_i / s and theta_i (linear, ntk, yarn, llama3; dynamic "
        "at length l > L with its effective s l / L - (s - 1)), and a factor of 1 gives the default table "
        "(all but dynamic).",
        source="Position Interpolation (arXiv 2306.15595); transformers' rope tests (bounds for yarn and "
               "llama3)",
    ),
    Invariant(
        "scaling.linear-positions",
        "scaling",
        "Linear scaling is position interpolation: f_linear(x, s q) = f(x, q) for the unscaled f.",
        source="Position Interpolation (arXiv 2306.15595); seed tutorial 000 (pair 4: 204.8 rad, not "
               "819.2); seed tutorial 001 (position 4096 read as 1024)",
    ),
    Invariant(
        "scaling.ntk-endpoints",
        "scaling",
        "NTK-aware scaling keeps theta_0 and divides the lowest frequency by exactly s.",
        source="bloc97's NTK-aware scaling (2023); seed tutorial 001 (base 40000, the simplification of "
               "40890)",
    ),
    Invariant(
        "scaling.band-edges",
        "scaling",
        "YaRN and Llama 3 leave the pairs below their band unchanged, divide the pairs above it by s, and "
        "move monotonically from one to the other in between.",
        source="YaRN (arXiv 2309.00071); seed tutorial 001 (YaRN's bands, corrected); Meta's Llama 3.1 "
               "apply_scaling; transformers PR #32330; torchtitan PR #3787",
    ),
    Invariant(
        "scaling.dynamic-length",
        "scaling",
        "Dynamic NTK computes the default table for sequence lengths up to its original length, and its "
        "frequencies only decrease as the length grows beyond it.",
        source="transformers dynamic NTK; vLLM #3488 and #41236",
    ),
    Invariant(
        "scaling.attention-factor",
        "scaling",
        "Every rotated pair comes out scaled by the attention factor: ||f(x, p)_pair|| = g ||x_pair|| (q "
        "and k each carry g, so logits carry g^2).",
        source="YaRN eq. 22; sglang PR #33558, TensorRT-LLM PR #16379, exllamav3 #259",
    ),
    Invariant(
        "scaling.longrope-switch",
        "scaling",
        "LongRoPE uses the short factors for sequences up to its original length and the long factors "
        "beyond it.",
        source="LongRoPE (Phi-3); transformers PR #33129",
    ),
    Invariant(
        "decode.consistency",
        "decode",
        "Prefill followed by single-token steps yields the same rotated keys as a fresh pass over the "
        "whole sequence at every step.",
        source="transformers #25104, PR #33129; vLLM #3488, #41236",
    ),
    Invariant(
        "kernel.rotation",
        "kernel",
        "Given the cos and sin of every pair (exactly rounded to the output dtype, one per pair or one "
        "per dim as the kernel declares), kernel(x, cos, sin) rotates each pair (x_a, x_b) to (x_a cos - "
        "x_b sin, x_a sin + x_b cos) at any angle, to within K_ROT u of the output dtype of the pair "
        "norm, and copies the dims at and beyond rotary_dim.",
        source="flash-attention's apply_rotary_emb and vLLM's rotary kernels take cos/sin from the "
               "caller; a wrapper that builds the table tests the wrapper, not the kernel",
    ),
    Invariant(
        "kernel.qk",
        "kernel",
        "transformers' apply(q, k, cos, sin) -> (q_embed, k_embed), q (batch, h_q, seq, d) and k (batch, "
        "h_kv, seq, d) with h_q a multiple of h_kv, cos and sin (batch, seq, rotary_dim) one value per "
        "dim: every head of q and of k is rotated by its own batch row's table at its own position, as "
        "kernel.rotation.",
        source="transformers' apply_rotary_pos_emb (modeling_llama and the models that copy it)",
    ),
    Invariant(
        "rope.layout",
        "layout",
        "In a batched layout (bshd, bhsd, sbhd; thd with cu_seqlens; vLLM's flattened query and key) "
        "every row of every head is rotated by its own position, as rope.conformance, whatever the "
        "strides of x (contiguous, a view of a fused qkv buffer, transposed, reversed or broadcast "
        "storage); an in-place function leaves its result in x and writes nothing outside it.",
        source="flash-attention's apply_rotary_emb (cu_seqlens, seqlen_offsets, inplace); vLLM's "
               "RotaryEmbedding.forward (positions, query, key) on views of the fused qkv; transformers "
               "#22161 (left padding)",
    ),
    Invariant(
        "table.angles",
        "table",
        "A cos/sin table builder gives, for every position and pair, (g cos p theta'_i, g sin p theta'_i) "
        "to within the error bound of the expectation's precision class, one value per pair or one per "
        "dim (the two dims of a pair bit for bit equal).",
        source="transformers' RotaryEmbedding.forward (cos, sin per dim, times attention_scaling); vLLM's "
               "cos_sin_cache (per pair)",
    ),
    Invariant(
        "autograd.inverse-rotation",
        "autograd",
        "The gradient with respect to x is the inverse rotation of the upstream gradient, R(-p) g, and "
        "pass-through dims get the upstream gradient unchanged.",
        source="R is orthogonal: d(R x)/dx = R, so the gradient is R^T g = R(-p) g",
    ),
    Invariant(
        "sinusoidal.conformance",
        "sinusoidal",
        "PE(p) holds sin(p theta_i) and cos(p theta_i), theta_i = base^(-2i/d), in the expected layout "
        "(interleaved as in the paper, or concatenated [sin | cos]), to within the error bound.",
        source="Vaswani et al. 2017 (arXiv 1706.03762); tensor2tensor, fairseq, GPT-J layouts; seed "
               "tutorial 000",
    ),
    Invariant(
        "sinusoidal.norm",
        "sinusoidal",
        "||PE(p)||^2 = d/2 at every position.",
        source="seed tutorial 000 (||PE(p)|| = 4.00 at d = 32)",
    ),
    Invariant(
        "sinusoidal.relative-dot",
        "sinusoidal",
        "PE(p) . PE(q) depends only on p - q: PE(p) . PE(q) = PE(p + c) . PE(q + c) for every shift c.",
        source="seed tutorial 000 (mean cos 0.66 at gap 8, the same at any start)",
    ),
    Invariant(
        "sinusoidal.shift-matrix",
        "sinusoidal",
        "PE(p + k) = M_k PE(p) with one matrix M_k for every p (recovered from data and checked on other "
        "positions).",
        source="Vaswani et al. 2017, section 3.5; seed tutorial 000",
    ),
    Invariant(
        "sinusoidal.distinct",
        "sinusoidal",
        "Distinct positions below max_position get distinct encodings.",
        source="seed tutorial 000 (the ladder of wavelengths)",
    ),
    Invariant(
        "sinusoidal.length-independent",
        "sinusoidal",
        "PE(p) does not depend on the length of the sequence it is computed for.",
        source="seed tutorial 000 (slot 3 is 0.43 in 8 tokens, 0.05 in 64: length-normalised index)",
    ),
    Invariant(
        "additive.cross-term-leakage",
        "sinusoidal",
        "With an additive encoding the score (x_m + P_m) W_Q . (x_n + P_n) W_K at a fixed gap changes "
        "with the absolute position (a documented non-invariant: it is expected to fail, and its spread "
        "is reported); RoPE's score does not (rope.relative-position).",
        source="seed tutorial 004's lab (gap 2 at starts 3, 10, 100, 4000)",
        expected_to_fail="a documented non-invariant of every additive encoding: the cross terms x_m W_Q "
                         ". P_n W_K and P_m W_Q . x_n W_K depend on the absolute positions",
    ),
    Invariant(
        "learned.in-range",
        "learned",
        "Every position below max_len answers with a finite row of the table.",
        source="GPT-2's learned table",
    ),
    Invariant(
        "learned.out-of-range-raises",
        "learned",
        "A position at or beyond max_len raises: never wraps, clamps or reads garbage.",
        source="nanochat PR #520, pegainfer #220; seed tutorial 000 (position 1088 raises)",
    ),
    Invariant(
        "learned.parameter-count",
        "learned",
        "The table holds max_len x d parameters.",
        source="seed tutorial 000 (1024 x 768 = 786432)",
    ),
    Invariant(
        "attention.shift-invariance",
        "attention",
        "With RoPE, shifting every position by c leaves the attention output unchanged.",
        source="RoFormer; seed tutorial 004",
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
        "position-ids.text",
        "positions",
        "Text tokens have one position on every axis, one more than the text token before them in their run; a "
        "text-only sequence gets 0, 1, ..., n - 1 on every axis, so that the M-RoPE it feeds is exactly 1-D RoPE "
        "(axes.text-reduction).",
        source="Qwen2-VL (arXiv 2409.12191) section 2.1; vLLM #16878 (Qwen-Omni off by one); transformers #40154 (a "
               "fourth text row)",
    ),
    Invariant(
        "position-ids.grid",
        "positions",
        "A vision block starting at s gives its token at merged-grid index (k, i, j), row-major, the height and width "
        "positions s + i and s + j: its extents are the merged grid's, every (h, w) cell once per temporal step.",
        source="Qwen2-VL's get_rope_index; mlx-vlm #1282 (later images given text positions); LightX2V #1416 (1-D "
               "positions without mm_token_type_ids)",
    ),
    Invariant(
        "position-ids.time",
        "positions",
        "A vision block's temporal position at grid step k is s + time(k) under the model's rule (video_time: the "
        "step itself, floor(k x seconds x tokens_per_second) with fractional seconds kept, or one frame per block); "
        "a still image's is s, never scaled by the clock.",
        source="Qwen2.5-VL's get_rope_index; transformers #45381 / PR #45400 (temporal positions wrong, a test at "
               "0.083 s per grid step never moving t); transformers #45325 (still images time-scaled); transformers "
               "PR #48669 (second_per_grid_t cast to int); lmms-eval #1393 (the same cast)",
    ),
    Invariant(
        "position-ids.resume",
        "positions",
        "Every segment after the first starts at one past the largest position used so far on any axis: text after "
        "a video resumes beyond its last frame, and a later image follows the one before.",
        source="Qwen2-VL's get_rope_index (st_idx = max + 1); mlx-vlm #1282",
    ),
    Invariant(
        "position-ids.batch",
        "positions",
        "A batch row's positions do not depend on the other rows, and left padding does not move its real tokens: "
        "each row of a padded batch equals the row built alone.",
        source="transformers' get_rope_index with attention_mask; Liger-Kernel #461 (batch row 0's positions)",
    ),
    Invariant(
        "position-ids.decode",
        "positions",
        "Decoding continues every row at one past the largest position of its prompt, on every axis (rope_deltas = "
        "that minus the prompt's length).",
        source="transformers' compute_3d_position_ids and rope_deltas; vLLM #16878",
    ),
    Invariant(
        "decode.attention-consistency",
        "decode",
        "Attention decoded with a KV cache (prefill, then one step per token) gives, at every step, the "
        "output row of the full causal pass over the sequence so far.",
        source="executorch PR #2010 (frequencies not sliced to start_pos); rotary-embedding-torch #11 "
               "(offset missing); transformers #22161 (positions not derived from the mask)",
    ),
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
    Invariant(
        "xpos.conformance",
        "xpos",
        "Each pair's score between a query at m and a key at n is zeta_i^((m - n) / scale_base) times RoPE's "
        "R(m theta_i) q_i . R(n theta_i) k_i, zeta_i = (2i / d + 0.4) / 1.4, to within the error bound of the "
        "expectation's class (a centre common to both exponents cancels).",
        source="Sun et al., A Length-Extrapolatable Transformer (arXiv 2212.10554), eq. 9; rotary-embedding-torch's "
               "use_xpos",
    ),
    Invariant(
        "xpos.relative-position",
        "xpos",
        "Scores depend on m - n alone: <q'(m), k'(n)> = <q'(m + c), k'(n + c)> for every shift c, as a decoder "
        "calls it step by step.",
        source="Sun et al. (arXiv 2212.10554): the decay is relative",
    ),
    Invariant(
        "xpos.inverse-scale",
        "xpos",
        "Queries and keys are scaled inversely: at equal positions each pair's score is RoPE's, q_i . k_i, whatever "
        "the position.",
        source="Sun et al. (arXiv 2212.10554): queries scaled by zeta^(n / gamma), keys by zeta^(-n / gamma)",
    ),
]

REGISTRY: dict[str, Invariant] = {inv.id: inv for inv in _ENTRIES}
assert len(REGISTRY) == len(_ENTRIES), "duplicate invariant id"

SECTIONS = tuple(dict.fromkeys(inv.section for inv in _ENTRIES))


def get(invariant_id: str) -> Invariant:
    try:
        return REGISTRY[invariant_id]
    except KeyError:
        raise KeyError(f"unknown invariant {invariant_id!r} (known: {', '.join(REGISTRY)})") from None
