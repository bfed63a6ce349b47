"""The RoPE map and the sinusoidal encoding, defined once: the rotation of a pair with its sign
convention, how the pairs are laid out (:meth:`ropespec.spec.expectation.Expect.pairs` and ``out_pairs``), the
attention factor, the pass-through dims, and softmax attention.

Every function is plain arithmetic plus the ``cos``/``sin``/``exp`` it is given, so one definition
serves sympy (:mod:`ropespec.spec.proofs` proves the invariants on these functions) and mpmath or floats (the
tests check the references against them at many points, ``tests/test_reference.py``).
"""

from __future__ import annotations

from typing import Callable, Sequence


def rotate(xa, xb, c, s):
    """The rotation of one pair by the angle with cosine c and sine s, counter-clockwise:
    (x_a, x_b) -> (x_a c - x_b s, x_a s + x_b c), i.e. R(phi) = [[cos phi, -sin phi], [sin phi, cos phi]]."""
    return xa * c - xb * s, xa * s + xb * c


def token_positions(offsets, cu_seqlens):
    """A packed variable-length batch (the thd layout): the position of every token, ``offsets[i] + j -
    cu_seqlens[i]`` for token j of sequence i (cu_seqlens: the sequences' starts and the end, as flash-attention
    takes them; offsets: where each sequence's positions start, as decode uses). numpy arrays in and out."""
    import numpy as np

    cu = np.asarray(cu_seqlens, dtype=np.int64)
    seq = np.repeat(np.arange(len(cu) - 1), np.diff(cu))
    return np.asarray(offsets, dtype=np.int64)[seq] + np.arange(cu[-1]) - cu[seq]


def encode(expect, x: Sequence, angles: Sequence, cos: Callable, sin: Callable, gain=1) -> list:
    """f(x): pair i of x, at :meth:`Expect.pairs` ``[i]``, rotated by ``angles[i]`` (p theta'_i), scaled
    by ``gain`` (the attention factor) and written at ``out_pairs()[i]``; dims at and beyond the
    rotary dim are copied."""
    y = list(x)
    for (a, b), (oa, ob), phi in zip(expect.pairs(), expect.out_pairs(), angles):
        ya, yb = rotate(x[a], x[b], cos(phi), sin(phi))
        y[oa], y[ob] = gain * ya, gain * yb
    return y


def axis_angles(pair_axes: Sequence[int], position: Sequence, thetas: Sequence, offsets: Sequence | None = None,
                scales: Sequence | None = None) -> list:
    """The angles of a multi-axis RoPE: pair j turns by phi_j = c_j theta_j, its coordinate c_j = (p[a(j)] + o_j) s_j
    (the position on its own axis a(j), :meth:`ropespec.spec.expectation.Expect.pair_axes`, plus that axis's offset,
    times its scale: :meth:`~ropespec.spec.expectation.Expect.pair_offsets`, :meth:`~ropespec.spec.expectation.Expect.pair_scales`;
    p[a(j)] itself without them) times its frequency (:meth:`~ropespec.spec.expectation.Expect.ladder`)."""
    k = len(thetas)
    offsets = offsets if offsets is not None else [0] * k
    scales = scales if scales is not None else [1] * k
    return [(position[a] + o) * s * t for a, o, s, t in zip(pair_axes, offsets, scales, thetas)]


def query_temperature(p, beta, length, offset, log: Callable, floor: Callable):
    """The query temperature of Llama 4's NoPE layers and of Ministral 3 and Mistral 4 (``llama_4_scaling_beta``): the
    query at position p is multiplied by tau(p) = 1 + beta ln(1 + floor((p + offset) / length)) after RoPE, so its
    scores are; offset 1 is Llama 4's (p + 1), 0 Mistral's (p). tau is 1 below the first step and rises by
    beta ln((k + 1) / k) at each multiple k of ``length`` (less the offset)."""
    return 1 + beta * log(1 + floor((p + offset) / length))


def pe_pair(phi, cos: Callable, sin: Callable):
    """The sinusoidal encoding's pair at angle phi = p theta_i: (sin phi, cos phi) (Vaswani et al. 2017:
    sin at dim 2i, cos at 2i + 1)."""
    return sin(phi), cos(phi)


def attention_weights(scores: Sequence[Sequence], exp: Callable, causal: bool = False) -> list[list]:
    """softmax over each row of the scores (over j <= i when causal)."""
    out = []
    for i, row in enumerate(scores):
        e = [exp(v) if not causal or j <= i else 0 for j, v in enumerate(row)]
        total = sum(e)
        out.append([v / total for v in e])
    return out


def alibi_slopes(n_heads: int, pow2: Callable, frac: Callable, bias_max=8) -> list:
    """ALiBi's slope of every head (Press et al., arXiv 2108.12409, the authors' ``get_slopes``; MPT's ``gen_slopes``
    with ``alibi_bias_max``): for n_heads a power of two, head h (0-based) gets 2^(-bias_max (h + 1) / n_heads);
    otherwise the slopes of the closest power of two c below n_heads, followed by every other slope of 2c, starting
    at its first (2^(-bias_max (2k + 1) / (2c)), k = 0 ... n_heads - c - 1). ``pow2(e)`` is 2^e and ``frac(a, b)``
    the exact ratio a / b of its number system (sympy's Rational, mpmath's division)."""
    c = 1 << (int(n_heads).bit_length() - 1)
    out = [pow2(-frac(bias_max * (h + 1), c)) for h in range(c)]
    return out + [pow2(-frac(bias_max * (2 * k + 1), 2 * c)) for k in range(n_heads - c)]


def alibi_bias(m, i, j, symmetric: bool = False):
    """ALiBi's bias of query position i on key position j for a head of slope m: -m (i - j), the causal form (keys
    j <= i; BLOOM's m j equals it up to the row's constant m i, which softmax ignores), or -m |i - j| symmetric."""
    return -m * abs(i - j) if symmetric else -m * (i - j)


def t5_bucket(relative_position: int, bidirectional: bool, num_buckets: int, max_distance: int,
              log_ratio: Callable, floor: Callable) -> int:
    """T5's relative-position bucket (transformers' ``T5Attention._relative_position_bucket``, Raffel et al. 2020)
    of relative_position = key position - query position. Bidirectional: half the buckets for each sign, positive
    distances offset by num_buckets / 2; unidirectional: positive distances are bucket 0. Of the n buckets of one
    sign, distances below max_exact = n // 2 get their own bucket, larger ones are log-spaced up to max_distance
    (:func:`t5_log_bucket`, floored) and saturate at bucket n - 1. ``log_ratio(a, b)`` is ln(a / b) and ``floor``
    the floor of its number system."""
    ret, rp, n = t5_sign_split(relative_position, bidirectional, num_buckets)
    max_exact = n // 2
    if rp < max_exact:
        return ret + rp
    return ret + min(max_exact + int(floor(t5_log_bucket(rp, n, max_distance, log_ratio))), n - 1)


def t5_sign_split(relative_position: int, bidirectional: bool, num_buckets: int) -> tuple[int, int, int]:
    """(offset, distance, buckets of one sign): bidirectional halves the buckets and offsets positive distances by
    that half; unidirectional keeps only keys at or before the query (later ones are distance 0)."""
    if bidirectional:
        half = num_buckets // 2
        return (half if relative_position > 0 else 0), abs(relative_position), half
    return 0, -min(relative_position, 0), num_buckets


def t5_log_bucket(distance: int, n: int, max_distance: int, log_ratio: Callable):
    """The log-spaced bucket of a distance at or past max_exact = n // 2, before its floor: ln(distance / max_exact) /
    ln(max_distance / max_exact) * (n - max_exact)."""
    max_exact = n // 2
    return log_ratio(distance, max_exact) / log_ratio(max_distance, max_exact) * (n - max_exact)


#: xPos's gamma (Sun et al., arXiv 2212.10554; rotary-embedding-torch's 0.4)
XPOS_GAMMA = 0.4


def xpos_zeta(i, head_dim, frac: Callable, gamma=XPOS_GAMMA):
    """xPos's per-pair decay base zeta_i = (2i / d + gamma) / (1 + gamma) of pair i of a head of d dims; ``frac(a, b)``
    the exact ratio of its number system."""
    return (frac(2 * i, head_dim) + gamma) / (1 + gamma)


def xpos_pair_score(zeta, m, n, scale_base, rotated_dot):
    """The score pair i contributes between a query at m and a key at n under xPos: the query scaled by
    zeta^(m / scale_base), the key by zeta^(-n / scale_base), so that their product zeta^((m - n) / scale_base)
    multiplies RoPE's R(m theta) q_i . R(n theta) k_i (``rotated_dot``). A common shift of both exponents (a centre,
    as rotary-embedding-torch's) cancels."""
    return zeta ** ((m - n) / scale_base) * rotated_dot
