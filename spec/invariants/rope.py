"""RoPE's invariants: the rotation, its structure, multi-axis RoPE, the contract every implementation keeps, the scaling methods, decoding, kernels, layouts, tables and gradients."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 0

INVARIANTS = [
    Invariant(
        "rope.conformance",
        "conformance",
        "Each pair (x_a, x_b) of the rotary dims is rotated by the angle p * theta_i with theta_i = "
        "rope_theta^(-2i/rotary_dim), to within the error bound of the expectation's precision class (multi-axis "
        "RoPE: p is the position on the pair's own axis, theta_i its ladder's frequency; the reverse direction: by "
        "-p * theta_i).",
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
        "frequencies only decrease as the length grows beyond it; under SGLang's policy (max_model_len given) the "
        "table of the served length at every length.",
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
        "beyond it; under vLLM's policy (max_model_len given) the long factors at every length once the served "
        "length exceeds the original one, else the short ones.",
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
        "kernel.rotation. The same holds of the complex form, apply(xq, xk, freqs_cis) with freqs_cis = cos + "
        "i sin one complex number per pair, q and k (batch, seq, heads, d) or (batch, heads, seq, d).",
        source="transformers' apply_rotary_pos_emb (modeling_llama and the models that copy it); Meta's Llama and "
               "DeepSeek's reference apply_rotary_emb(xq, xk, freqs_cis)",
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
]
