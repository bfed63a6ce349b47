"""Exact references of the other encodings: the sinusoidal table (mpmath, rounded to float64) and one
head of attention with the exact RoPE (float64 softmax over exact rotations)."""

from __future__ import annotations

import numpy as np

from ropespec.reference.rope import apply, cos_sin
from ropespec.spec.angles import cos_sin as dd_cos_sin, sinusoidal_layout, theta_hi_lo
from ropespec.spec import tables
from ropespec.spec.expectation import Expect


def sinusoidal(expect: Expect, positions) -> np.ndarray:
    """PE(p) for every position: sin(p theta_i) and cos(p theta_i), theta_i = base^(-2i/d), in the
    expectation's layout ("interleaved": sin at 2i, cos at 2i + 1; "half": [sin | cos])."""
    plain = expect.replace(rope_scaling=None, rotary_dim=expect.head_dim)
    rows = []
    for p in np.asarray(positions).tolist():
        c, s = cos_sin(plain, int(p))
        c, s = np.array([float(v) for v in c]), np.array([float(v) for v in s])
        rows.append(sinusoidal_layout(s[None], c[None], expect.convention)[0])
    return np.array(rows).reshape(len(rows), expect.head_dim)


def sinusoidal_fast(expect: Expect, positions) -> np.ndarray:
    """:func:`sinusoidal` to about an ulp, in vectorised double-double arithmetic (ropespec.spec.angles, the
    same path as ropespec.reference.fast): for bulk uses such as distances over thousands of positions."""
    plain = expect.replace(rope_scaling=None, rotary_dim=expect.head_dim)
    hi, lo, _ = theta_hi_lo(plain)
    c, s = dd_cos_sin(np.asarray(positions, dtype=np.float64)[:, None], hi, lo)
    return sinusoidal_layout(s, c, expect.convention)


def attention(expect: Expect, q, k, v, positions, causal: bool, *, additive: bool = False) -> np.ndarray:
    """softmax(t tau (R q)(R k)^T / sqrt(d)) v with the exact RoPE, in float64, per head (t the softmax scale's temperature,
    ropespec.spec.tables.score_temperature: 1 but for DeepSeek's YaRN; tau each query row's temperature by position,
    ropespec.spec.tables.query_temperature: 1 but for Llama 4's and Mistral's): q holds n_heads
    heads of head_dim (contiguous), k and v n_kv_heads; query head h reads kv head h // group.
    ``additive``: the sinusoidal encoding added to q and k instead of the rotation; a NoPE layer (the attention
    block's ``attention_nope``) turns neither."""
    d, H, KV = expect.head_dim, expect.n_heads, expect.n_kv_heads
    temperature = float(tables.score_temperature(expect))  # DeepSeek's YaRN: mscale(s, mscale_all_dim)^2
    tau = tables.query_temperature(expect, positions)  # Llama 4's and Mistral's query temperature by position
    pe = sinusoidal(expect.replace(dtype="float64"), positions) if additive else None
    out = []
    for h in range(H):
        j = h // (H // KV)
        qh, kh, vh = q[:, h * d : (h + 1) * d], k[:, j * d : (j + 1) * d], v[:, j * d : (j + 1) * d]
        if additive:
            qr, kr = qh + pe, kh + pe
        elif not expect.params("attention").turns:  # NoPE: Llama 4's no_rope_layers
            qr, kr = qh, kh
        else:
            qr, kr = apply(expect, qh, positions), apply(expect, kh, positions)
        scores = qr @ kr.T / np.sqrt(d) * temperature * tau[:, None]  # each query row's temperature tau(p)
        if causal:
            scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        out.append((w / w.sum(axis=1, keepdims=True)) @ vh)
    return np.concatenate(out, axis=1)
