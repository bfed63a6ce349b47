r"""The tolerance model: how far a correct implementation may be from the exact rotation.

Tolerances here are derived from the expectation's precision promise, never tuned. All bounds are
for one output component of one rotated pair (x_a, x_b) at position p, turning at theta_i, with
phi = p * theta_i, and are proportional to the pair's norm ||x|| = sqrt(x_a^2 + x_b^2).

Rotation (the strict class: angle known exactly). The implementation rounds cos(phi) and
sin(phi) to its output dtype (relative error u each, u the unit roundoff of the output dtype),
forms two products and one sum in that dtype:

    y_a = fl(fl(x_a c~) - fl(x_b s~)),   c~ = c (1 + d1), s~ = s (1 + d2),  |d| <= u

so |y_a - y_a*| <= (|x_a c| + |x_b s|)(2u) + |y_a| u + u (cos/sin themselves evaluated to within
an ulp) <= 4 u ||x||, because |x_a c| + |x_b s| <= ||x|| (Cauchy-Schwarz, c^2 + s^2 = 1) and
|y_a| <= ||x||. This does not depend on the position:  ``K_ROT = 4``.

Angle formed in dtype A (``angle_dtype``). The product p * theta rounded to A is off by at most
|phi| u_A; if p itself is not representable in A (p > 2**mantissa_bits(A)) rounding it adds another
|phi| u_A. cos and sin of the rounded angle, evaluated in A, are each off by at most u_A, which
moves a component by at most 2 u_A ||x||. A rotation by a wrong angle moves a component by at most
||x|| |d phi| (the derivative of a rotation has norm ||x||).

Inverse frequencies formed in dtype E (``inv_freq_dtype``). theta = 1 / base ** (2i/r) computed in E
(as transformers does) carries a relative error of at most u_E (3 + (2i/r)(b + e ln base)), where the
3 is pow (one ulp = 2u) plus the division, b = 1 if base is not representable in E and e = 1 if the
exponent 2i/r is not; at position p that is an angle error of |phi| times that relative error. Real code
forms the ladder two other ways too, each bounded in :func:`ladder_formation_errors`: the exponential of a
log (mlx) and a recurrence theta_i = theta_(i-1) s (ggml), whose i products make its bound grow with i;
the class allows the largest. A scaling method adds 3 u_E (division by the factor, the ramp's mix of two
tables) and, for ntk and dynamic, a rounded new base (b = 1); inside yarn's ramp and llama3's band the
mixing coefficient's own rounding is amplified by up to (s - 1) (:func:`ropespec.spec.tables.mixing_error`
derives it per pair).

Scaling methods with an attention factor g multiply the output by g: callers pass g ||x|| as the
pair norm.

Sum: |y - y*| <= atol + ||x|| * (K_ROT u_out + 2 u_A + min(2, |d phi|)), with
|d phi| <= |phi| (u_A (1 + [p inexact in A]) + rel_theta(E)). ``exact`` for A or E drops its terms.
``atol = K_ROT * tiny(out)`` covers results in the subnormal range. rtol is relative to the norm of
the pair, not to the element, because a rotated component can pass through zero.
"""

from __future__ import annotations

import math

import numpy as np

from ropespec.spec import tables
from ropespec.spec.angles import theta_hi_lo
from ropespec.spec.dtypes import TINY, exact_integer_limit, round_to, unit_roundoff
from ropespec.spec.expectation import Expect

#: unit roundoffs of error in one rotation done in the output dtype (derivation above)
K_ROT = 4.0

#: a component of a rotated pair differs from the exact one by at most twice the pair norm: a class whose bound (relative
#: to the pair norm) reaches this is met by any output at all, and promises nothing there (it is saturated)
SATURATED = 2.0
#: an output whose error reaches the pair's own norm is no rotation of it (an angle off by 60 degrees or more, or the
#: norm lost): where a class is saturated, such an output is noise, and the class holds nowhere past where it saturated
NOISE = 1.0


def _u(dtype: str) -> float:
    return 0.0 if dtype == "exact" else unit_roundoff(dtype)


def atol(expect: Expect) -> float:
    """Absolute floor of every bound: K_ROT smallest normals of the output dtype."""
    return K_ROT * TINY[expect.dtype]


def rotation_rtol(expect: Expect) -> float:
    """Relative (to the pair norm) error of a rotation by an exactly known angle, in the output
    dtype, plus the cos/sin evaluation error of the angle dtype. Independent of the position."""
    return K_ROT * unit_roundoff(expect.dtype) + 2.0 * _u(expect.angle_dtype)


#: the ways real code forms the ladder theta_i = b^(-2i/r) in the inverse frequencies' dtype, each bounded by
#: :func:`ladder_formation_errors`: pow (transformers' 1 / base ** (2i/r)), the exponential of a log (mlx's fast.rope,
#: 2^(-(2i/r) log2 b)), a recurrence (ggml's theta *= theta_scale, one product a pair)
LADDER_FORMATIONS = ("pow", "exp-log", "recurrence")


#: the inverse-frequency dtypes real code forms its ladder in by every formation of :data:`LADDER_FORMATIONS`
FORMED_EVERY_WAY = ("float32", "float64")


def ladder_formation_errors(expect: Expect) -> dict[str, np.ndarray]:
    """Per formation (:data:`LADDER_FORMATIONS`), a bound on |d theta_i / theta_i| per pair when theta_i is formed in
    ``expect.inv_freq_dtype`` (unit roundoff u) so; x = 2i/R is the pair's exponent (:meth:`Expect.ladder`).

    * pow, b^x then 1/that: pow's ulp (2 u) and the division (u); b rounded (when inexact) is a relative u in b, x u in
      theta; x rounded (when inexact) moves the exponent by x u, x ln b u in theta: u (3 + x (b_inexact + x_inexact ln
      b)).
    * exp-log, exp(-x ln b): ln b rounded (u |ln b| absolute), x rounded (x_inexact) and the product (u each, relative
      to x ln b) move the exponent by x |ln b| (2 + x_inexact) u, and b rounded by x u; exp's ulp adds 2 u:
      u (2 + x (|ln b| (2 + x_inexact) + b_inexact)). Base 2 (2^(-x log2 b)) is the same bound.
    * recurrence, theta_i = theta_(i-1) s with the step s = b^(-2/R) formed once (by pow or exp-log, the larger of
      their bounds at x = 2/R: d_s) and i products in the dtype (u each): to first order i (u + d_s). The position
      itself may start the recurrence (p s^i, as ggml's theta = p): the angle's own rounding is then among the i
      products, and the angle dtype's rounding of p theta counted apart still covers it.

    A scaling method adds 3 u (the division by the factor, the ramp's mix of two tables; a new base is a rounded base)
    and, inside yarn's ramp and llama3's band, the mixing coefficient's rounding
    (:func:`ropespec.spec.tables.mixing_error`).

    A ladder formed in a 16-bit float is pow's alone (:data:`FORMED_EVERY_WAY`): the code that forms its ladder by a
    log or a recurrence (ggml, mlx) forms it in float32 whatever the activations' dtype."""
    e_dtype = expect.inv_freq_dtype
    n = expect.n_pairs
    if e_dtype == "exact":
        return {f: np.zeros(n) for f in LADDER_FORMATIONS}
    u = unit_roundoff(e_dtype)
    ladder = expect.ladder()
    expo = np.abs([2.0 * i / R for i, R in ladder])  # 2i/r, a per-axis ladder's 2k/d_a, or k/(K - 1)
    steps = np.abs([float(i) for i, _ in ladder])
    step = np.abs([2.0 / R for _, R in ladder])
    base = expect.rope_theta
    ln_b = abs(math.log(base))
    rescaled = expect.method.new_base  # a new base, itself rounded
    b_inexact = float(rescaled or float(round_to(base, e_dtype)) != base)
    inexact = lambda v: (round_to(v, e_dtype) != v).astype(np.float64)  # noqa: E731
    scaled = 3.0 if expect.method.scales else 0.0  # division by the factor, ramp mixing
    mixing = np.array(tables.mixing_error(expect))  # yarn's ramp and llama3's band, see there
    pow_ = lambda x: 3.0 + x * (b_inexact + inexact(x) * ln_b)  # noqa: E731
    exp_log = lambda x: 2.0 + x * (ln_b * (2.0 + inexact(x)) + b_inexact)  # noqa: E731
    d_step = np.maximum(pow_(step) - 1.0, exp_log(step))  # the step s = b^(-2/R) itself: pow without the division
    rest = scaled + mixing
    out = {"pow": u * (pow_(expo) + rest)}
    if e_dtype in FORMED_EVERY_WAY:
        out.update({"exp-log": u * (exp_log(expo) + rest), "recurrence": u * (steps * (1.0 + d_step) + rest)})
    return out


def inv_freq_relative_error(expect: Expect) -> np.ndarray:
    """Bound on |d theta_i / theta_i| when theta_i is formed in ``expect.inv_freq_dtype`` (per pair), whichever way real
    code forms its ladder there (:func:`ladder_formation_errors`): the largest of their bounds."""
    return np.max(np.stack(list(ladder_formation_errors(expect).values())), axis=0)


def angle_error(expect: Expect, positions, thetas, xp=np):
    """Bound on |d phi| for each (position, pair): shape (len(positions), n_pairs). ``xp``: the array namespace
    of ``positions`` and ``thetas`` (numpy, or torch for a comparison on the GPU: the same rule, there). A
    multi-axis RoPE's positions are (n, A): each pair's angle is its own axis's position times its frequency."""
    if expect.multi_axis and xp.asarray(positions).ndim == 2:
        p = xp.asarray(positions)[:, list(expect.pair_axes())] * 1.0
    else:  # one position per row (a multi-axis RoPE's text tokens: every axis at p)
        p = (xp.asarray(positions) * 1.0)[:, None]
    th = xp.asarray(thetas)
    u_a = _u(expect.angle_dtype)
    per_pair = u_a + inv_freq_relative_error(expect)  # (n_pairs,): the rounding of phi and of theta_i
    rel = _like(per_pair, th, xp)[None, :]
    if expect.coordinates:  # each pair turns by its axis's coordinate, (p + offset) x scale
        o = _like(expect.pair_offsets(), th, xp)[None, :]
        sc = _like(expect.pair_scales(), th, xp)[None, :]
        phi = xp.abs((p + o) * sc) * th[None, :]
        if expect.angle_dtype == "exact":
            return phi * rel
        # the coordinate is formed in A with up to COORDINATE_ROUNDINGS roundings (the offset added, the scale and
        # its constant rounded and multiplied, as DINOv3's 2 pi ((i + 0.5) / H 2 - 1) does), each at most u of the
        # terms it is formed from, (|p| + |offset|) x scale: near the centre they cancel, and their rounding does not
        return phi * rel + COORDINATE_ROUNDINGS * u_a * (xp.abs(p) + xp.abs(o)) * sc * th[None, :]
    p = xp.abs(p)
    phi = p * th[None, :]
    if expect.angle_dtype != "exact":
        rel = rel + u_a * (p > exact_integer_limit(expect.angle_dtype))  # p itself rounded in A
    return phi * rel


def rate_allowance(expect: Expect) -> float:
    """The largest relative error of a pair's rate (its angle per unit of position) that :func:`angle_error` allows
    every pair at once: the angle's rounding, the worst inverse frequency's, and a real coordinate's roundings. A rate
    off by more, by one factor for every pair, is no rounding but a scale."""
    u_a = _u(expect.angle_dtype)
    coordinate = COORDINATE_ROUNDINGS * u_a if expect.coordinates else 0.0
    return u_a + float(np.max(inv_freq_relative_error(expect), initial=0.0)) + coordinate


#: roundings in forming a query temperature tau(p) in the angle's precision, see :func:`attention_bound`
TEMPERATURE_ROUNDINGS = 4

#: roundings in forming a real coordinate (p + offset) x scale in the angle's precision, see :func:`angle_error`
COORDINATE_ROUNDINGS = 4


def _like(a: np.ndarray, ref, xp):
    """A small numpy array as ``xp``'s array on ``ref``'s device."""
    return a if xp is np else xp.asarray(a, dtype=ref.dtype, device=ref.device)


#: the error of ``ropespec.reference.fast`` (double-double angles, float64 cos/sin and products), relative to the pair
#: norm: within 2 ulp of float64 to 2^53 (tests/test_accuracy.py, against mpmath)
FAST_REFERENCE_ERROR = 2 * 2.0**-52


def fast_reference_suffices(expect: Expect) -> bool:
    """Whether a property may compare with ``ropespec.reference.fast`` instead of the mpmath reference: when the
    fast reference's own error is at most 1/100 of the smallest bound of ``expect``'s class (its
    rotation error, which no position lowers). Not so for the strict float64 class (4 ulp against 2):
    there the mpmath reference stays the oracle. Where the fast one is used, its error is added to the bound."""
    return rotation_rtol(expect) >= 100 * FAST_REFERENCE_ERROR


def norm_readoff_error(n_pairs: int) -> float:
    """Relative error, in float64, of an attention factor read off exact float64 outputs as the mean of
    n pair norms (properties/probe.py): hypot (1 ulp), the mean's pairwise sum (ceil(log2 n) ulp) and
    the division by n, plus the reference factor's own rounding to float64 (half an ulp): (2.5 +
    ceil(log2 n)) u of float64. A bound without it fails correct float64 code at 6 u."""
    return (2.5 + math.ceil(math.log2(max(n_pairs, 1)))) * unit_roundoff("float64")


def attention_factor_allowance(expect: Expect, g: float) -> float:
    """Allowed | measured - g | for an attention factor g read off as the mean output norm of unit pairs: the norm
    bound of a pair of norm g (:func:`norm_bound`) plus g times :func:`norm_readoff_error`."""
    return float(norm_bound(expect, np.array(g))) + g * norm_readoff_error(expect.n_pairs)


#: relative error of a frequency the black-box probe reads off (properties/probe.py) from exact float64
#: outputs: arctan2 (1 ulp), the unwrapping sum and the division by p (1 ulp each), with margin: 8 ulp
PROBE_RTOL = 8 * unit_roundoff("float64")


def component_bound(expect: Expect, positions, thetas, pair_norms, xp=np):
    """Allowed |y - y*| for each output component of each pair: shape (n, n_pairs).

    ``pair_norms`` has shape (n, n_pairs); ``thetas`` are the expected frequencies (n_pairs,); ``xp`` as for
    :func:`angle_error`.
    """
    d_phi = angle_error(expect, positions, thetas, xp).clip(max=2.0)
    return atol(expect) + pair_norms * (rotation_rtol(expect) + d_phi)


def strict_bound(expect: Expect, pair_norms: np.ndarray) -> np.ndarray:
    """The bound of the strict class (angles exact): position independent."""
    return atol(expect) + pair_norms * K_ROT * unit_roundoff(expect.dtype)


def norm_bound(expect: Expect, pair_norms: np.ndarray) -> np.ndarray:
    """Allowed | ||y_pair|| - ||x_pair|| |. A wrong angle does not change the norm, so only the
    rotation error counts, on both components: sqrt(2) * (rotation bound)."""
    return math.sqrt(2.0) * (atol(expect) + pair_norms * rotation_rtol(expect))


def same_angle_bound(expect: Expect, scale: np.ndarray) -> np.ndarray:
    """Allowed error between results that share their angles (same positions, same call), such as
    f(alpha x + beta y, p) against alpha f(x, p) + beta f(y, p): the angle error and the cos/sin
    evaluation error are common to both and cancel, leaving the rotation's own rounding,
    K_ROT u_out per unit of ``scale`` (a bound on the norm of the pair a component belongs to)."""
    return atol(expect) + scale * K_ROT * unit_roundoff(expect.dtype)


def convention_free_norm(x: np.ndarray) -> np.ndarray:
    """A bound on the norm of the pair any component of each row belongs to, whatever the convention:
    ||(x_j, x_k)|| <= sqrt(2) max |x|. Shape (n, 1). Used by the properties that compare an
    implementation with itself, so that a wrong convention fails the properties it breaks and no other."""
    return math.sqrt(2.0) * np.max(np.abs(x), axis=1, keepdims=True)


def attention_bound(expect: Expect, q: np.ndarray, k: np.ndarray, v: np.ndarray, positions) -> float:
    """Allowed error of an attention output whose scores come from q and k rotated within this model.

    q (n, n_heads * head_dim), k and v (m, n_kv_heads * head_dim), heads contiguous; ``positions`` the
    rows' positions (an int: every row at that position, a bound for all of them). A rotated pair of q at
    position p errs by at most its norm times (rotation rtol + the angle error of that pair at p), so the
    score of query row i and key row j, <R q_i, R k_j> / sqrt(head_dim), errs by at most
        ds_ij = sum over pairs |q_i,pair| |k_j,pair| (2 rtol + dphi_pair(p_i) + dphi_pair(p_j)) / sqrt(head_dim)
    (the largest pair norms over the heads). Scores that move by at most ds move a softmax-weighted mean of v
    by at most (exp(2 ds) - 1) max |v|. The mean itself, formed and rounded in the output dtype, errs by at
    most (m + 4) u max |v| (m additions, the exponential, the normalisation and the final rounding). A layer that turns
    neither q nor k (NoPE) has no rotation to err: every dim is held as the pass-through dims are."""
    d = expect.head_dim
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n, m = len(q), len(k)
    pos = np.broadcast_to(np.asarray(positions, dtype=np.int64), (max(n, m),))
    a, b = (np.array(ix) for ix in zip(*expect.pairs()))
    turns = expect.params("attention").turns
    still = expect.passthrough if turns else np.arange(d)  # NoPE: no dim turns

    def pair_norms(x, rows):  # (rows, n_pairs): the largest over heads; pass-through dims as pairs of one
        heads = x.reshape(rows, -1, d)
        rot = np.hypot(heads[:, :, a], heads[:, :, b]).max(axis=1) * (1.0 if turns else 0.0)
        rest = np.abs(heads[:, :, still]).max(axis=1)
        return rot, rest

    hi, lo, _ = theta_hi_lo(expect, int(np.max(pos)) + 1)  # the definitions' table, cached per length
    thetas = hi + lo
    dphi = np.minimum(2.0, angle_error(expect, pos, thetas))  # (rows, n_pairs)
    rr = rotation_rtol(expect)
    qn, qrest = pair_norms(q, n)
    kn, krest = pair_norms(k, m)
    ds = (qn[:, None, :] * kn[None, :, :] * (2 * rr + dphi[:n, None, :] + dphi[None, :m, :])).sum(axis=2)
    ds = ds + (qrest[:, None, :] * krest[None, :, :]).sum(axis=2) * 2 * K_ROT * unit_roundoff(expect.dtype)
    tau = tables.query_temperature(expect, pos[:n])  # each query row's temperature by position (1 without one)
    if expect.params("attention").tempered:
        # tau formed in the angle's precision (TEMPERATURE_ROUNDINGS roundings: the division, the log, beta's product
        # and the sum), then rounded to the query's dtype and multiplied into it (two roundings there): relative to
        # the whole score, |q_i| |k_j|
        whole = (np.sqrt((qn ** 2).sum(axis=1) + (qrest ** 2).sum(axis=1))[:, None]
                 * np.sqrt((kn ** 2).sum(axis=1) + (krest ** 2).sum(axis=1))[None, :])
        ds = ds + whole * (TEMPERATURE_ROUNDINGS * _u(expect.angle_dtype) + 2 * unit_roundoff(expect.dtype))
    ds = ds * tau[:, None]
    ds = float(np.max(ds)) / math.sqrt(d) * float(tables.score_temperature(expect))
    vmax = float(np.abs(v).max()) if v.size else 0.0
    mean = (m + 4) * unit_roundoff(expect.dtype) * vmax
    # two weighted means of the same values differ by at most 2 max |v|, however far the scores moved
    return float(min(2.0, math.expm1(min(2 * ds, 2.0))) * vmax + mean + atol(expect))


#: the sizes a model checked whole is kept within (the model family's tiny models): layers, and the longest inner
#: product any of its layers forms (hidden x the MLP's width, or the tokens an attention row sums over)
TINY_LAYERS, TINY_WIDTH = 4, 4096


def model_logits_bound(dtype: str, logits: np.ndarray) -> float:
    """Allowed difference of two evaluations of one model's logits that compute the same function in another order
    (a batch of one row or of several, the whole sequence or a prefix from a cache, positions given or inferred).

    Each layer forms inner products of at most n = TINY_WIDTH terms, each in error by at most gamma_n = n u / (1 - n u)
    times the sum of the terms' magnitudes (Higham, Accuracy and Stability, 3.1); normalised activations keep that sum
    of the order of the largest logit, and the residual stream adds the TINY_LAYERS layers' errors to first order. Two
    evaluations, each within (TINY_LAYERS + 1) gamma_n max |logit| of the exact function, differ by at most twice
    that. In float64 this is about 5e-12 of the largest logit; a wrong position moves logits by O(1)."""
    u, n = _u(dtype), TINY_WIDTH
    gamma = n * u / (1 - n * u)
    return float(2 * (TINY_LAYERS + 1) * gamma * np.max(np.abs(logits)))


def model_offset_bound(expect: Expect, logits: np.ndarray, top: int, rotations: int = 1) -> float:
    """Allowed difference of a RoPE model's logits at positions moved by a constant from its logits at the positions
    themselves. The two evaluations compute the same function but for the RoPE's own rounding at each position:
    model_logits_bound's terms, and in each layer an angle theta = inv_freq p formed in the angle dtype (the output's,
    where that is coarser) off by at most theta u, its cos and sin by u each, so that a query or key turned by
    ``rotations`` rotations (a cached key re-rotated by a shift: two) whose angles sum to at most ``top`` (the largest
    position; inv_freq is at most 1) is off by at most (top + 2 rotations) u of its norm, and a score by twice that,
    against the inner product's gamma_n. Added to each layer's error as model_logits_bound adds it."""
    u, n = _u(expect.dtype), TINY_WIDTH
    gamma = n * u / (1 - n * u)
    turn = 2 * (top + 2 * rotations) * max(_u(expect.angle_dtype), u)
    return float(2 * (TINY_LAYERS + 1) * (gamma + turn) * np.max(np.abs(logits)))


def class_name(expect: Expect) -> str:
    """Which tolerance class the expectation promises, in words."""
    if expect.angle_dtype == "exact" and expect.inv_freq_dtype == "exact":
        return f"strict {expect.dtype} (exact angles)"
    return f"{expect.dtype} output, angles in {expect.angle_dtype}, inv_freq in {expect.inv_freq_dtype}"


def bias_class_name(expect: Expect) -> str:
    """Which class of a bias the expectation promises, in words (its ``angle_dtype``: where the bias is formed)."""
    if expect.angle_dtype == "exact":
        return f"strict {expect.dtype} (formed from the distance)"
    return f"{expect.dtype} output, formed in {expect.angle_dtype} from the positions"


#: unit roundoffs of the output dtype in one element of a bias formed correctly: the product of slope and distance
#: (or position), then its rounding to the output dtype
K_BIAS = 2.0
#: unit roundoffs of the class's dtype in a bias formed there from the positions: the slope (pow, 1 ulp = 2 u), the
#: product, the row's shift
K_BIAS_FORMED = 4.0


def bias_bound(expect: Expect, slopes, q_positions, k_positions) -> np.ndarray:
    """Allowed |b - b* - c_i| for ALiBi's bias, up to one constant c_i per row: (n_heads, n_q, n_k).

    The strict class (``angle_dtype`` exact: formed from the distance, rounded once to the output dtype D) admits
    K_BIAS u_D |m_h (i - j)| (a correct bias is exact at the diagonal, where its distance is 0). The class of a dtype
    A also admits what forming the bias in A from the positions of the call costs, as BLOOM's m_h j (from the
    sequence's start) and MPT's m_h (j - L + 1) (from its end) do: values up to m_h P, P the call's largest position,
    rounded to D (K_BIAS u_D m_h P) and formed in A (K_BIAS_FORMED u_A m_h P). ``atol`` covers subnormal results."""
    m = np.asarray(slopes, dtype=np.float64)[:, None, None]
    q, k = np.asarray(q_positions, dtype=np.float64), np.asarray(k_positions, dtype=np.float64)
    u_d = unit_roundoff(expect.dtype)
    bound = K_BIAS * u_d * m * np.abs(q[None, :, None] - k[None, None, :])
    if expect.angle_dtype != "exact":
        reach = m * max(float(np.max(np.abs(q), initial=0)), float(np.max(np.abs(k), initial=0)))
        bound = bound + (K_BIAS * u_d + K_BIAS_FORMED * _u(expect.angle_dtype)) * reach
    return atol(expect) + bound


def slope_bound(expect: Expect, slopes) -> np.ndarray:
    """Allowed |m - m*| for each slope: K_BIAS u of the output dtype (the slope rounded to it, and its pow), plus
    K_BIAS_FORMED u of the class's dtype where it is formed there; read off a bias, twice that (two elements)."""
    m = np.abs(np.asarray(slopes, dtype=np.float64))
    return atol(expect) + m * (K_BIAS * unit_roundoff(expect.dtype) + K_BIAS_FORMED * _u(expect.angle_dtype))


def t5_log_slack(n: int, max_distance: int, distance: int) -> float:
    """How far T5's float32 computation of the log-spaced bucket ln(x / h) / ln(D / h) (n - h) may be from its exact
    value (n buckets of one sign, h = n // 2, x the distance, D max_distance): x / h rounded (u, so u in the log),
    float32's log (1 ulp: 2 u relative to the log), ln(D / h) rounded to float32, the division and the product (u
    each, relative to the result); u is float32's unit roundoff. Where a whole number lies within it of the exact
    value, either neighbour is T5's answer."""
    u = unit_roundoff("float32")
    h = n // 2
    if distance < h or max_distance <= h:
        return 0.0
    l1, l2 = math.log(distance / h), math.log(max_distance / h)
    return (n - h) * (u + 2 * u * l1) / l2 + 3 * u * (l1 / l2 * (n - h))


def xpos_score_bound(expect: Expect, largest: int, thetas, zetas, q_norms, k_norms) -> np.ndarray:
    """Allowed |s - s*| for each pair's xPos score between a query and a key of one call: ``q_norms`` (n_pairs,) and
    ``k_norms`` (n_k, n_pairs) the output pairs' norms, ``largest`` the call's largest position, ``thetas`` the
    pairs' frequencies. Each output pair is
    off by at most rel ||pair|| per component: rel = rotation_rtol + the angle error at ``largest`` + the scale's,
    zeta^x formed in the angle dtype A with x = (p - c) / scale_base and |p - c| <= ``largest`` (its exponent's
    rounding and pow's ulp: u_A (2 + 2 |ln zeta| largest / scale_base)); a dot of two pairs so off is off by at most
    |q'| |k'| (sqrt2 r_q + sqrt2 r_k + 2 r_q r_k)."""
    z = np.asarray(zetas, dtype=np.float64)
    dphi = angle_error(expect, np.array([largest]), np.asarray(thetas, dtype=np.float64))[0].clip(max=2.0)
    scale = _u(expect.angle_dtype) * (2 + 2 * np.abs(np.log(z)) * largest / expect.params("xpos").xpos_scale_base)
    rel = rotation_rtol(expect) + dphi + scale
    qn, kn = np.asarray(q_norms, dtype=np.float64)[None, :], np.asarray(k_norms, dtype=np.float64)
    return atol(expect) + qn * kn * (2 * np.sqrt(2) * rel + 2 * rel * rel) + 4 * unit_roundoff("float64") * qn * kn
