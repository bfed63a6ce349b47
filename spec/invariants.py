"""The invariant registry: every invariant the suite checks, stated once.

Each entry has a stable id (scripts and reports depend on it), the spec section it belongs to
(properties/test_<section>.py checks it) and a one-sentence statement. Properties name the id they
check; nothing else restates an invariant.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Invariant:
    id: str
    section: str
    statement: str
    families: tuple[str, ...] = ("rope",)
    source: str = ""
    #: a documented non-invariant: why every implementation of its families is expected to fail it
    expected_to_fail: str = ""


_ENTRIES = [
    Invariant(
        "rope.conformance",
        "conformance",
        "Each pair (x_a, x_b) of the rotary dims is rotated by the angle p * theta_i with "
        "theta_i = rope_theta^(-2i/rotary_dim), to within the error bound of the expectation's precision class.",
    ),
    Invariant(
        "rope.norm-per-pair",
        "rotation",
        "The rotation preserves the Euclidean norm of every pair: ||f(x, p)_pair|| = ||x_pair||.",
    ),
    Invariant(
        "rope.relative-position",
        "rotation",
        "Scores depend only on the position difference: <f(q, m), f(k, n)> = <f(q, m + c), f(k, n + c)> for every shift c.",
    ),
    Invariant(
        "rope.identity-at-zero",
        "rotation",
        "At position 0 the encoding is the identity: f(x, 0) = x.",
    ),
    Invariant(
        "rope.composition",
        "rotation",
        "Rotations compose by adding positions: f(f(x, a), b) = f(x, a + b).",
    ),
    Invariant(
        "rope.linearity",
        "structure",
        "The encoding is linear in x: f(alpha x + beta y, p) = alpha f(x, p) + beta f(y, p).",
    ),
    Invariant(
        "rope.locality",
        "structure",
        "Each output pair depends only on its own input pair, under the expectation's pairing.",
    ),
    Invariant(
        "rope.partial-passthrough",
        "structure",
        "Dims at and beyond rotary_dim pass through bit-exactly unchanged.",
    ),
    Invariant(
        "contract.input-unmodified",
        "contract",
        "The caller's input array is not modified.",
    ),
    Invariant(
        "contract.deterministic",
        "contract",
        "The same input gives the same output, bit for bit.",
    ),
    Invariant(
        "contract.shape-finite",
        "contract",
        "Every call returns, within the time limit and without ending its process, an array of the input's "
        "kind, shape and dtype (real floating point), and every value is finite.",
    ),
]

_ENTRIES += [
    Invariant(
        "scaling.bounded",
        "scaling",
        "Every scaled frequency lies between theta_i / s and theta_i (linear, ntk, yarn, llama3; dynamic at "
        "length l > L with its effective s l / L - (s - 1)), and a factor of 1 gives the default table (all but dynamic).",
    ),
    Invariant(
        "scaling.linear-positions",
        "scaling",
        "Linear scaling is position interpolation: f_linear(x, s q) = f(x, q) for the unscaled f.",
    ),
    Invariant(
        "scaling.ntk-endpoints",
        "scaling",
        "NTK-aware scaling keeps theta_0 and divides the lowest frequency by exactly s.",
    ),
    Invariant(
        "scaling.band-edges",
        "scaling",
        "YaRN and Llama 3 leave the pairs below their band unchanged, divide the pairs above it by s, and "
        "move monotonically from one to the other in between.",
    ),
    Invariant(
        "scaling.dynamic-length",
        "scaling",
        "Dynamic NTK computes the default table for sequence lengths up to its original length, and its "
        "frequencies only decrease as the length grows beyond it.",
    ),
    Invariant(
        "scaling.attention-factor",
        "scaling",
        "Every rotated pair comes out scaled by the attention factor: ||f(x, p)_pair|| = g ||x_pair|| "
        "(q and k each carry g, so logits carry g^2).",
    ),
    Invariant(
        "scaling.longrope-switch",
        "scaling",
        "LongRoPE uses the short factors for sequences up to its original length and the long factors beyond it.",
    ),
    Invariant(
        "decode.consistency",
        "decode",
        "Prefill followed by single-token steps yields the same rotated keys as a fresh pass over the whole "
        "sequence at every step.",
        ("decode",),
    ),
    Invariant(
        "kernel.rotation",
        "kernel",
        "Given the cos and sin of every pair (exactly rounded to the output dtype, one per pair or one per dim as "
        "the kernel declares), kernel(x, cos, sin) rotates each pair (x_a, x_b) to (x_a cos - x_b sin, x_a sin + "
        "x_b cos) at any angle, to within K_ROT u of the output dtype of the pair norm, and copies the dims at and "
        "beyond rotary_dim.",
        ("kernel",),
    ),
    Invariant(
        "kernel.qk",
        "kernel",
        "transformers' apply(q, k, cos, sin) -> (q_embed, k_embed), q (batch, h_q, seq, d) and k (batch, h_kv, seq, d) "
        "with h_q a multiple of h_kv, cos and sin (batch, seq, rotary_dim) one value per dim: every head of q and of "
        "k is rotated by its own batch row's table at its own position, as kernel.rotation.",
        ("qk",),
    ),
    Invariant(
        "rope.layout",
        "layout",
        "In a batched layout (bshd, bhsd, sbhd; thd with cu_seqlens; vLLM's flattened query and key) every row of "
        "every head is rotated by its own position, as rope.conformance, whatever the strides of x (contiguous, a "
        "view of a fused qkv buffer, transposed, reversed or broadcast storage); an in-place function leaves its "
        "result in x and writes nothing outside it.",
    ),
    Invariant(
        "table.angles",
        "table",
        "A cos/sin table builder gives, for every position and pair, (g cos p theta'_i, g sin p theta'_i) to within the "
        "error bound of the expectation's precision class, one value per pair or one per dim (the two dims of a pair "
        "bit for bit equal).",
        ("table",),
    ),
    Invariant(
        "autograd.inverse-rotation",
        "autograd",
        "The gradient with respect to x is the inverse rotation of the upstream gradient, R(-p) g, and "
        "pass-through dims get the upstream gradient unchanged.",
        ("rope", "kernel", "qk"),
    ),
    Invariant(
        "sinusoidal.conformance",
        "sinusoidal",
        "PE(p) holds sin(p theta_i) and cos(p theta_i), theta_i = base^(-2i/d), in the expected layout "
        "(interleaved as in the paper, or concatenated [sin | cos]), to within the error bound.",
        ("sinusoidal",),
    ),
    Invariant("sinusoidal.norm", "sinusoidal", "||PE(p)||^2 = d/2 at every position.", ("sinusoidal",)),
    Invariant(
        "sinusoidal.relative-dot",
        "sinusoidal",
        "PE(p) . PE(q) depends only on p - q: PE(p) . PE(q) = PE(p + c) . PE(q + c) for every shift c.",
        ("sinusoidal",),
    ),
    Invariant(
        "sinusoidal.shift-matrix",
        "sinusoidal",
        "PE(p + k) = M_k PE(p) with one matrix M_k for every p (recovered from data and checked on other positions).",
        ("sinusoidal",),
    ),
    Invariant(
        "sinusoidal.distinct",
        "sinusoidal",
        "Distinct positions below max_position get distinct encodings.",
        ("sinusoidal",),
    ),
    Invariant(
        "sinusoidal.length-independent",
        "sinusoidal",
        "PE(p) does not depend on the length of the sequence it is computed for.",
        ("sinusoidal",),
    ),
    Invariant(
        "additive.cross-term-leakage",
        "sinusoidal",
        "With an additive encoding the score (x_m + P_m) W_Q . (x_n + P_n) W_K at a fixed gap changes with the "
        "absolute position (a documented non-invariant: it is expected to fail, and its spread is reported); "
        "RoPE's score does not (rope.relative-position).",
        ("sinusoidal",),
        expected_to_fail="a documented non-invariant of every additive encoding: the cross terms x_m W_Q . P_n W_K "
                         "and P_m W_Q . x_n W_K depend on the absolute positions",
    ),
    Invariant(
        "learned.in-range",
        "learned",
        "Every position below max_len answers with a finite row of the table.",
        ("learned",),
    ),
    Invariant(
        "learned.out-of-range-raises",
        "learned",
        "A position at or beyond max_len raises: never wraps, clamps or reads garbage.",
        ("learned",),
    ),
    Invariant("learned.parameter-count", "learned", "The table holds max_len x d parameters.", ("learned",)),
    Invariant(
        "attention.shift-invariance",
        "attention",
        "With RoPE, shifting every position by c leaves the attention output unchanged.",
        ("attention",),
    ),
    Invariant(
        "attention.permutation-equivariance",
        "attention",
        "Without a causal mask, permuting the rows (with their positions) permutes the output the same way.",
        ("attention",),
    ),
    Invariant("attention.values-unrotated", "attention", "V is never rotated: only Q and K carry positions.",
              ("attention",)),
    Invariant("attention.causal", "attention", "With the causal mask, row i of the output does not depend on rows after i.",
              ("attention",)),
    Invariant(
        "attention.grouped-query",
        "attention",
        "With n_heads query heads and n_kv_heads key/value heads, query head h attends with key/value head "
        "h // (n_heads / n_kv_heads), each head being the exact RoPE attention.",
        ("attention",),
    ),
    Invariant(
        "decode.attention-consistency",
        "decode",
        "Attention decoded with a KV cache (prefill, then one step per token) gives, at every step, the output "
        "row of the full causal pass over the sequence so far.",
        ("attention-decode",),
    ),
]

# where each invariant comes from: the paper, the seed tutorials (shared/seeds), or the public bug reports
# and code that motivated checking it
_SOURCES = {
    "rope.conformance": "RoFormer (Su et al., arXiv 2104.09864), eq. 34; seed tutorial 004",
    "rope.norm-per-pair": "RoFormer section 3.4.2; seed tutorial 004 (rotations keep lengths)",
    "rope.relative-position": "RoFormer eq. 16; seed tutorial 004 (gap 2 at starts 3, 10, 100, 4000)",
    "rope.identity-at-zero": "RoFormer: R(0) = I",
    "rope.composition": "llama.cpp's composition test rope(rope(x, 100 + i), -67) = rope(x, 33 + i)",
    "rope.linearity": "RoFormer: RoPE is a matrix multiplication",
    "rope.locality": "nanotron PR #427, vLLM #49290, flash-attention #288 (pairings mixed up)",
    "rope.partial-passthrough": "pie PR #603, maxtext #4616, vLLM PR #41185 (partial rotary)",
    "contract.input-unmodified": "flash-attention's tests (input untouched when not in place)",
    "contract.deterministic": "fla PR #967 (uninitialised output)",
    "contract.shape-finite": "nanochat PR #520, pegainfer #220 (positions beyond the table)",
    "scaling.bounded": "Position Interpolation (arXiv 2306.15595); transformers' rope tests (bounds for yarn and llama3)",
    "scaling.linear-positions": "Position Interpolation (arXiv 2306.15595); seed tutorial 000 (pair 4: 204.8 rad, not 819.2); seed tutorial 001 (position 4096 read as 1024)",
    "scaling.ntk-endpoints": "bloc97's NTK-aware scaling (2023); seed tutorial 001 (base 40000, the simplification of 40890)",
    "scaling.band-edges": "YaRN (arXiv 2309.00071); seed tutorial 001 (YaRN's bands, corrected); Meta's Llama 3.1 apply_scaling; transformers PR #32330; torchtitan PR #3787",
    "scaling.dynamic-length": "transformers dynamic NTK; vLLM #3488 and #41236",
    "scaling.attention-factor": "YaRN eq. 22; sglang PR #33558, TensorRT-LLM PR #16379, exllamav3 #259",
    "scaling.longrope-switch": "LongRoPE (Phi-3); transformers PR #33129",
    "decode.consistency": "transformers #25104, PR #33129; vLLM #3488, #41236",
    "kernel.rotation": "flash-attention's apply_rotary_emb and vLLM's rotary kernels take cos/sin from the caller; "
                       "a wrapper that builds the table tests the wrapper, not the kernel",
    "rope.layout": "flash-attention's apply_rotary_emb (cu_seqlens, seqlen_offsets, inplace); vLLM's "
                   "RotaryEmbedding.forward (positions, query, key) on views of the fused qkv; transformers #22161 "
                   "(left padding)",
    "kernel.qk": "transformers' apply_rotary_pos_emb (modeling_llama and the models that copy it)",
    "table.angles": "transformers' RotaryEmbedding.forward (cos, sin per dim, times attention_scaling); vLLM's "
                    "cos_sin_cache (per pair)",
    "autograd.inverse-rotation": "R is orthogonal: d(R x)/dx = R, so the gradient is R^T g = R(-p) g",
    "sinusoidal.conformance": "Vaswani et al. 2017 (arXiv 1706.03762); tensor2tensor, fairseq, GPT-J layouts; seed tutorial 000",
    "sinusoidal.norm": "seed tutorial 000 (||PE(p)|| = 4.00 at d = 32)",
    "sinusoidal.relative-dot": "seed tutorial 000 (mean cos 0.66 at gap 8, the same at any start)",
    "sinusoidal.shift-matrix": "Vaswani et al. 2017, section 3.5; seed tutorial 000",
    "sinusoidal.distinct": "seed tutorial 000 (the ladder of wavelengths)",
    "sinusoidal.length-independent": "seed tutorial 000 (slot 3 is 0.43 in 8 tokens, 0.05 in 64: length-normalised index)",
    "additive.cross-term-leakage": "seed tutorial 004's lab (gap 2 at starts 3, 10, 100, 4000)",
    "learned.in-range": "GPT-2's learned table",
    "learned.out-of-range-raises": "nanochat PR #520, pegainfer #220; seed tutorial 000 (position 1088 raises)",
    "learned.parameter-count": "seed tutorial 000 (1024 x 768 = 786432)",
    "attention.shift-invariance": "RoFormer; seed tutorial 004",
    "attention.permutation-equivariance": "attention without positions is permutation-equivariant (Vaswani et al. 2017)",
    "attention.values-unrotated": ("RoFormer (arXiv 2104.09864) eq. 16: only q and k are rotated; seed tutorial 004 "
                                   "(V is not rotated); transformers' "
                                   "apply_rotary_pos_emb(q, k, cos, sin); flash-attention's rotary tests"),
    "attention.causal": "the causal mask of decoder attention",
    "attention.grouped-query": "GQA (Ainslie et al. 2023); transformers' repeat_kv",
    "decode.attention-consistency": "executorch PR #2010 (frequencies not sliced to start_pos); rotary-embedding-torch #11 "
                                    "(offset missing); transformers #22161 (positions not derived from the mask)",
}
_ENTRIES = [
    Invariant(e.id, e.section, e.statement, e.families, _SOURCES.get(e.id, e.source), e.expected_to_fail) for e in _ENTRIES
]

REGISTRY: dict[str, Invariant] = {inv.id: inv for inv in _ENTRIES}
assert len(REGISTRY) == len(_ENTRIES), "duplicate invariant id"

SECTIONS = tuple(dict.fromkeys(inv.section for inv in _ENTRIES))


def get(invariant_id: str) -> Invariant:
    try:
        return REGISTRY[invariant_id]
    except KeyError:
        raise KeyError(f"unknown invariant {invariant_id!r} (known: {', '.join(REGISTRY)})") from None
