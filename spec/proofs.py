"""Symbolic proofs of the invariants, in sympy (not numeric sampling).

Each proof is a function of no arguments that returns a one-line account of what it established and
raises :class:`ProofError` when sympy cannot establish it. :data:`PROOFS` maps invariant ids (and the
facts of the tutorials' derivations, keyed ``lemma.*``) to their proofs; :func:`verify` runs one and
caches the outcome, so a test session pays for each proof once.

The d-dimensional RoPE is block-diagonal in 2x2 rotations; statements about it are proved for the
2x2 block symbolically and for the full block-diagonal matrix for every even d up to 16 (said so in
each account), since sympy has no symbolic-dimension block matrices that simplify reliably.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

MAX_D = 16


class ProofError(AssertionError):
    pass


def _zero(expr, what: str) -> None:
    e = sp.simplify(sp.expand_trig(sp.expand(expr)))
    if isinstance(e, sp.MatrixBase):
        if not e.is_zero_matrix:
            raise ProofError(f"{what}: residual {e}")
    elif e != 0:
        raise ProofError(f"{what}: residual {e}")


def R(a):
    return sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])


def block(d: int, angle_of_pair) -> sp.Matrix:
    return sp.diag(*[R(angle_of_pair(i)) for i in range(d // 2)])


a, b, m, n, s, th, p, k = sp.symbols("a b m n s theta p k", real=True)
base, r, L, lo, hi, g = sp.symbols("b r L lo hi g", positive=True)
q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
q, kk = sp.Matrix([q0, q1]), sp.Matrix([k0, k1])


def _theta(i, d):
    return sp.Symbol(f"theta_{i}", positive=True)


def lemma_transpose_product():
    _zero(R(a).T * R(b) - R(b - a), "R(a)^T R(b) = R(b - a)")
    return "R(a)^T R(b) = R(b - a) for symbolic a, b"


def norm_per_pair():
    _zero(R(a).T * R(a) - sp.eye(2), "R^T R = I")
    _zero((R(a) * q).dot(R(a) * q) - q.dot(q), "||R q|| = ||q||")
    return "R(a)^T R(a) = I, so ||R(a) q|| = ||q|| for a symbolic pair q"


def relative_position():
    _zero((R(m * th) * q).dot(R(n * th) * kk) - q.dot(R((n - m) * th) * kk), "pair")
    for d in range(2, MAX_D + 1, 2):
        qs = sp.Matrix(sp.symbols(f"x0:{d}", real=True))
        ks = sp.Matrix(sp.symbols(f"y0:{d}", real=True))
        Rm, Rn = block(d, lambda i: m * _theta(i, d)), block(d, lambda i: n * _theta(i, d))
        _zero((Rm * qs).dot(Rn * ks) - qs.dot(block(d, lambda i: (n - m) * _theta(i, d)) * ks), f"d = {d}")
    return (f"<R_m q, R_n k> = <q, R_(n-m) k> for a symbolic pair (q, k, m, n, theta) and for the block-diagonal "
            f"d-dim RoPE with symbolic theta_i, every even d up to {MAX_D}")


def identity_at_zero():
    _zero(R(0 * th) - sp.eye(2), "R(0) = I")
    return "R(0 theta) = I"


def composition():
    _zero(R(a) * R(b) - R(a + b), "R(a) R(b) = R(a + b)")
    return "R(a) R(b) = R(a + b), so f(f(x, a), b) = f(x, a + b)"


def linearity():
    x0, x1, y0, y1, al, be = sp.symbols("x0 x1 y0 y1 alpha beta", real=True)
    X, Y = sp.Matrix([x0, x1]), sp.Matrix([y0, y1])
    _zero(R(a) * (al * X + be * Y) - (al * R(a) * X + be * R(a) * Y), "linear")
    return "R(a)(alpha x + beta y) = alpha R(a) x + beta R(a) y"


def locality():
    d = 8
    M = block(d, lambda i: p * _theta(i, d))
    for i in range(d):
        for j in range(d):
            if i // 2 != j // 2 and M[i, j] != 0:
                raise ProofError(f"entry ({i}, {j}) couples two pairs")
    return "the RoPE matrix is block-diagonal: entry (i, j) is 0 unless i and j are in one pair (checked for d = 8 blocks of 2)"


def conformance():
    # the definition itself: the exponent of pair i is normalised by the rotary dim r
    i = sp.Symbol("i", nonnegative=True, integer=True)
    t = base ** (-2 * i / r)
    _zero(t.subs(i, 0) - 1, "theta_0 = 1")
    if sp.simplify(t.subs(i, i + 1) / t - base ** (-2 / r)) != 0:
        raise ProofError("not a geometric ladder")
    return "theta_i = b^(-2i/r) is a geometric ladder from theta_0 = 1 with ratio b^(-2/r)"


def partial_passthrough():
    M = sp.diag(R(a), sp.eye(2))
    _zero(M[2:, 2:] - sp.eye(2), "pass-through")
    return "the RoPE matrix with rotary dim r < d is diag(R, I): the last d - r dims are the identity"


def input_unmodified():
    x0, x1 = sp.symbols("x0 x1", real=True)
    out = R(a) * sp.Matrix([x0, x1])
    if not out.free_symbols <= {a, x0, x1}:
        raise ProofError("the output depends on more than x and the angle")
    return "f(x, p) is a new vector R(p theta) x: the definition writes nothing into x"


def deterministic():
    x0, x1 = sp.symbols("x0 x1", real=True)
    out = R(p * th) * sp.Matrix([x0, x1])
    if out.free_symbols != {p, th, x0, x1}:
        raise ProofError(f"free symbols {out.free_symbols}")
    return "f(x, p) is a function of (x, p, theta) alone: no state, no randomness"


def shape_finite():
    x0, x1 = sp.symbols("x0 x1", real=True)
    out = R(a) * sp.Matrix([x0, x1])
    if out.shape != (2, 1):
        raise ProofError("shape")
    # |y_j| <= |x0| + |x1|: each entry is a combination of x with coefficients in [-1, 1]
    return "R(a) x has the shape of x and |y_j| <= |x_0| + |x_1|: finite for finite x"


def lemma_cauchy_schwarz_rotation():
    xa, xb, c, sn = sp.symbols("x_a x_b c s", real=True)
    lhs = (sp.Abs(xa) * sp.Abs(c) + sp.Abs(xb) * sp.Abs(sn)) ** 2
    rhs = (xa**2 + xb**2) * (c**2 + sn**2)
    gap = sp.expand(rhs - lhs)
    square = sp.expand((sp.Abs(xa) * sp.Abs(sn) - sp.Abs(xb) * sp.Abs(c)) ** 2)
    _zero(gap - square, "Cauchy-Schwarz")
    return "(|x_a c| + |x_b s|)^2 = (x_a^2 + x_b^2)(c^2 + s^2) - (|x_a s| - |x_b c|)^2 <= ||x||^2: the K_ROT = 4 bound's key step"


def lemma_angle_error():
    x0, x1, dl = sp.symbols("x0 x1 delta", real=True)
    X = sp.Matrix([x0, x1])
    diff = R(a + dl) * X - R(a) * X
    _zero(diff.dot(diff) - 4 * sp.sin(dl / 2) ** 2 * X.dot(X), "angle error")
    return "||R(a + delta) x - R(a) x|| = 2 |sin(delta/2)| ||x|| <= |delta| ||x||: a wrong angle moves a pair by at most |delta| ||x||"


def lemma_pairing_conjugacy():
    out = []
    for d in range(2, MAX_D + 1, 2):
        thetas = [_theta(i, d) for i in range(d // 2)]
        Ri = sp.diag(*[R(p * t) for t in thetas])  # interleaved: pairs (2i, 2i+1)
        Rh = sp.zeros(d)
        for i, t in enumerate(thetas):  # half: pairs (i, i + d/2)
            c, sn = sp.cos(p * t), sp.sin(p * t)
            Rh[i, i], Rh[i, i + d // 2], Rh[i + d // 2, i], Rh[i + d // 2, i + d // 2] = c, -sn, sn, c
        P = sp.zeros(d)
        for i in range(d // 2):  # interleaved index 2i + c -> half index c * d/2 + i
            P[i, 2 * i], P[i + d // 2, 2 * i + 1] = 1, 1
        _zero(Rh - P * Ri * P.T, f"d = {d}")
        _zero(P.T * P - sp.eye(d), f"P orthogonal, d = {d}")
        out.append(d)
    return (f"R_half = P R_interleaved P^T with P the fixed permutation 2i + c -> c d/2 + i, P^T P = I, so scores "
            f"<P q, P k> are unchanged; every even d up to {MAX_D}")


def lemma_sinusoidal():
    d = 8
    thetas = [_theta(i, d) for i in range(d // 2)]
    pe = lambda pos: sp.Matrix([f(pos * t) for t in thetas for f in (sp.sin, sp.cos)])
    _zero(pe(p).dot(pe(p)) - sp.Rational(d, 2), "||PE||^2 = d/2")
    Mk = sp.diag(*[sp.Matrix([[sp.cos(k * t), sp.sin(k * t)], [-sp.sin(k * t), sp.cos(k * t)]]) for t in thetas])
    _zero(pe(p + k) - Mk * pe(p), "PE(p + k) = M_k PE(p)")
    _zero(pe(p).dot(pe(n)) - sum(sp.cos((p - n) * t) for t in thetas), "PE(p).PE(q)")
    return "for d = 8 with symbolic theta_i: ||PE(p)||^2 = d/2; PE(p + k) = M_k PE(p), M_k free of p; PE(p).PE(q) = sum cos((p - q) theta_i)"


def lemma_additive_leakage():
    qv, kv, Pm, Pn = (sp.Matrix(sp.symbols(f"{c}0:2", real=True)) for c in ("u", "v", "P", "Q"))
    W1, W2 = sp.Matrix(2, 2, sp.symbols("w0:4", real=True)), sp.Matrix(2, 2, sp.symbols("z0:4", real=True))
    full = (W1 * (qv + Pm)).dot(W2 * (kv + Pn))
    terms = (W1 * qv).dot(W2 * kv) + (W1 * qv).dot(W2 * Pn) + (W1 * Pm).dot(W2 * kv) + (W1 * Pm).dot(W2 * Pn)
    _zero(full - terms, "four terms")
    rope = (R(m * th) * W1 * qv).dot(R(n * th) * W2 * kv)
    _zero(rope - (W1 * qv).dot(R((n - m) * th) * W2 * kv), "RoPE score")
    return ("(q + P_m)W_Q . (k + P_n)W_K = qk + q P_n + P_m k + P_m P_n: the cross terms depend on absolute m, n; "
            "RoPE's score <R_m W q, R_n W k> = <W q, R_(n-m) W k> depends on n - m only")


def scaling_bounded():
    mm = sp.Symbol("mix", nonnegative=True)
    sf = sp.Symbol("s", positive=True)
    t = sp.Symbol("theta", positive=True)
    tp = mm * t / sf + (1 - mm) * t
    low = sp.factor(tp - t / sf)  # = (1 - mix) theta (1 - 1/s)
    high = sp.factor(t - tp)  # = mix theta (1 - 1/s)
    _zero(low - (1 - mm) * t * (sf - 1) / sf, "lower")
    _zero(high - mm * t * (sf - 1) / sf, "upper")
    _zero(tp.subs(sf, 1) - t, "factor 1")
    return ("theta' = m theta/s + (1 - m) theta with m in [0, 1] (linear m = 1; yarn's ramp; llama3's 1 - gamma): "
            "theta' - theta/s = (1 - m) theta (s - 1)/s >= 0 and theta - theta' = m theta (s - 1)/s >= 0 for s >= 1; s = 1 gives theta")


def linear_positions():
    sf = sp.Symbol("s", positive=True)
    _zero(R(p * (th / sf)) - R((p / sf) * th), "linear")
    return "R(p theta / s) = R((p / s) theta): dividing frequencies by s is dividing positions by s"


def ntk_endpoints():
    sf = sp.Symbol("s", positive=True)
    rr = sp.Symbol("r", positive=True)
    newb = base * sf ** (rr / (rr - 2))
    lowest = lambda bb: bb ** (-(rr - 2) / rr)
    ratio = sp.powdenest(sp.expand_power_base(lowest(newb) / lowest(base), force=True), force=True)
    _zero(sp.simplify(ratio) - 1 / sf, "lowest / s")
    _zero(newb ** 0 - 1, "theta_0")
    return "with b' = b s^(r/(r-2)): theta'_0 = b'^0 = 1 and theta'_(r/2-1) = b'^(-(r-2)/r) = b^(-(r-2)/r) / s exactly"


def band_edges():
    t, sf, Lv = sp.symbols("theta s L", positive=True)
    lam = 2 * sp.pi / t
    gamma = (Lv / lam - lo) / (hi - lo)
    smooth = (1 - gamma) * t / sf + gamma * t
    _zero(smooth.subs(t, 2 * sp.pi * hi / Lv) - 2 * sp.pi * hi / Lv, "llama3 high edge: unchanged")
    _zero(smooth.subs(t, 2 * sp.pi * lo / Lv) - 2 * sp.pi * lo / Lv / sf, "llama3 low edge: divided by s")
    i, low, high = sp.symbols("i low high", real=True)
    ramp = (i - low) / (high - low)
    yarn = ramp * t / sf + (1 - ramp) * t
    _zero(yarn.subs(i, low) - t, "yarn low edge")
    _zero(yarn.subs(i, high) - t / sf, "yarn high edge")
    return ("llama3: at lambda = L/hi the smoothed theta' is theta, at lambda = L/lo it is theta/s; yarn: at i = low the ramp "
            "gives theta, at i = high theta/s: both curves are continuous at their band edges")


def dynamic_length():
    sf, Lv, l = sp.symbols("s L l", positive=True)
    rr = sp.Symbol("r", positive=True)
    grown = base * (sf * l / Lv - (sf - 1)) ** (rr / (rr - 2))
    _zero(grown.subs(l, Lv) - base, "l = L")
    deriv = sp.diff(sf * l / Lv - (sf - 1), l)
    if sp.simplify(deriv - sf / Lv) != 0:
        raise ProofError("derivative")
    return ("base'(l) = b (s l/L - (s - 1))^(r/(r-2)) equals b at l = L (and below, where l = max(seq_len, L) = L) and "
            "grows with l (d/dl of the inner term is s/L > 0), so every theta_i only decreases")


def attention_factor():
    _zero((g * R(a) * q).dot(g * R(a) * q) - g**2 * q.dot(q), "norm")
    _zero((g * R(m * th) * q).dot(g * R(n * th) * kk) - g**2 * q.dot(R((n - m) * th) * kk), "logits")
    return "||g R q|| = g ||q||, and <g R_m q, g R_n k> = g^2 <q, R_(n-m) k>: logits carry the square"


def longrope_switch():
    seq, Lv = sp.symbols("seq L", positive=True)
    short, long = sp.symbols("short long", positive=True)
    ext = sp.Piecewise((long, seq > Lv), (short, True))
    if ext.subs({seq: 4096, Lv: 4096}) != short or ext.subs({seq: 4097, Lv: 4096}) != long:
        raise ProofError("switch")
    return "ext = long if seq_len > L else short: at seq_len = L the short factors, at L + 1 the long ones"


def decode_consistency():
    sf, Lv, l1, l2 = sp.symbols("s L l1 l2", positive=True)
    rr = sp.Symbol("r", positive=True)
    b1 = base * (sf * l1 / Lv - (sf - 1)) ** (rr / (rr - 2))
    b2 = base * (sf * l2 / Lv - (sf - 1)) ** (rr / (rr - 2))
    if sp.simplify(b1.subs({l1: 2 * Lv, sf: 2, rr: 4}) - b2.subs({l2: 3 * Lv, sf: 2, rr: 4})) == 0:
        raise ProofError("tables equal")
    return ("the key of row j at length l is R(p_j theta(l)) x_j; dynamic NTK's base differs between lengths beyond L "
            "(e.g. 2L and 3L), so keys cached at one length are not the fresh pass's at another unless recomputed")


def autograd_inverse_rotation():
    x0, x1, g0, g1 = sp.symbols("x0 x1 g0 g1", real=True)
    X, G = sp.Matrix([x0, x1]), sp.Matrix([g0, g1])
    J = (R(a) * X).jacobian(X)
    _zero(J - R(a), "Jacobian")
    _zero(J.T * G - R(-a) * G, "gradient")
    return "d(R(a) x)/dx = R(a), so the gradient of <R(a) x, g> is R(a)^T g = R(-a) g"


def sinusoidal_conformance():
    _zero(sp.Matrix([sp.sin(a), sp.cos(a)]) - R(-a) * sp.Matrix([0, 1]), "pair")
    return "a sinusoidal pair (sin p theta, cos p theta) is R(-p theta) (0, 1): the encoding is the rotation of a fixed vector"


def sinusoidal_distinct():
    gap = sp.Symbol("g", real=True)
    diff = sp.Matrix([sp.sin((p + gap) * th) - sp.sin(p * th), sp.cos((p + gap) * th) - sp.cos(p * th)])
    _zero(diff.dot(diff) - 4 * sp.sin(gap * th / 2) ** 2, "distance")
    return ("||PE_i(p + g) - PE_i(p)||^2 = 4 sin^2(g theta_i / 2) for each pair: positions closer than the slowest "
            "pair's period 2 pi / theta_min never coincide")


def sinusoidal_length_independent():
    ell = sp.Symbol("ell", positive=True)
    pe = sp.Matrix([sp.sin(p * th), sp.cos(p * th)])
    if ell in pe.free_symbols:
        raise ProofError("depends on the length")
    return "PE(p) = (sin p theta_i, cos p theta_i) has no term in the sequence length"


def learned_table():
    max_len, dd = 5, 3
    W = sp.Matrix(max_len, dd, lambda i, j: sp.Symbol(f"w_{i}_{j}"))
    if len(W.free_symbols) != max_len * dd:
        raise ProofError("count")
    try:
        W[max_len, 0]
    except IndexError:
        return "a table of max_len rows of d parameters holds max_len x d of them, and has no row max_len (indexing it raises)"
    raise ProofError("row max_len exists")


def _softmax_rows(S):
    n = S.shape[0]
    return sp.Matrix(n, S.shape[1], lambda i, j: sp.exp(S[i, j]) / sum(sp.exp(S[i, c]) for c in range(S.shape[1])))


def attention_permutation():
    n = 3
    S = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"s_{i}{j}", real=True))
    V = sp.Matrix(n, 2, lambda i, j: sp.Symbol(f"v_{i}{j}", real=True))
    P = sp.Matrix([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    _zero(_softmax_rows(P * S * P.T) * (P * V) - P * (_softmax_rows(S) * V), "equivariance")
    return "softmax(P S P^T) P V = P softmax(S) V for a permutation P (n = 3, symbolic scores and values)"


def attention_values():
    n = 3
    S = sp.zeros(n, n)
    V = sp.Matrix(n, 2, lambda i, j: sp.Symbol(f"v_{i}{j}", real=True))
    W = _softmax_rows(S)
    _zero(W * V - sp.ones(n, n) * V / n, "mean")
    return "with q = 0 every score is 0 and softmax(0) V is the mean of V: V enters unrotated, weighted by a row-stochastic matrix"


def attention_causal():
    n = 3
    S = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"s_{i}{j}", real=True) if j <= i else -sp.oo)
    V = sp.Matrix(n, 1, lambda i, j: sp.Symbol(f"v_{i}", real=True))
    W = sp.Matrix(n, n, lambda i, j: 0 if j > i else sp.exp(S[i, j]) / sum(sp.exp(S[i, c]) for c in range(i + 1)))
    out = W * V
    for i in range(n):
        for j in range(i + 1, n):
            if sp.diff(out[i], V[j]) != 0:
                raise ProofError("row depends on a later value")
    return "with scores -inf above the diagonal, out_i = sum_(j <= i) w_ij v_j: d out_i / d v_j = 0 for j > i"


def decode_attention():
    n = 3
    S = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"s_{i}{j}", real=True))
    V = sp.Matrix(n, 1, lambda i, j: sp.Symbol(f"v_{i}", real=True))
    full = [sum(sp.exp(S[i, j]) * V[j] for j in range(i + 1)) / sum(sp.exp(S[i, j]) for j in range(i + 1)) for i in range(n)]
    step = [sum(sp.exp(S[t, j]) * V[j] for j in range(t + 1)) / sum(sp.exp(S[t, j]) for j in range(t + 1)) for t in range(n)]
    for a_, b_ in zip(full, step):
        _zero(a_ - b_, "step")
    return ("row t of the causal pass, sum_(j <= t) softmax_j(s_tj) v_j, uses only keys and values 0..t with scores "
            "s_tj = <R_t q_t, R_j k_j>: a step that attends over the cached rows 0..t gives it exactly (n = 3)")


def attention_grouped_query():
    H, KV = 8, 2
    group = H // KV
    served = {j: [h for h in range(H) if h // group == j] for j in range(KV)}
    if any(len(hs) != group or hs != list(range(j * group, (j + 1) * group)) for j, hs in served.items()):
        raise ProofError("grouping")
    hh = sp.Symbol("h", integer=True, nonnegative=True)
    if sp.floor((hh * 0 + 5) / group) != 1:
        raise ProofError("floor")
    return ("kv head j serves the query heads j g .. j g + g - 1 (g = n_heads / n_kv_heads), contiguous blocks of "
            "g, as repeat_kv lays them out (checked for 8 query and 2 kv heads)")


PROOFS = {
    "rope.conformance": conformance,
    "rope.norm-per-pair": norm_per_pair,
    "rope.relative-position": relative_position,
    "rope.identity-at-zero": identity_at_zero,
    "rope.composition": composition,
    "rope.linearity": linearity,
    "rope.locality": locality,
    "rope.partial-passthrough": partial_passthrough,
    "contract.input-unmodified": input_unmodified,
    "contract.deterministic": deterministic,
    "contract.shape-finite": shape_finite,
    "scaling.bounded": scaling_bounded,
    "scaling.linear-positions": linear_positions,
    "scaling.ntk-endpoints": ntk_endpoints,
    "scaling.band-edges": band_edges,
    "scaling.dynamic-length": dynamic_length,
    "scaling.attention-factor": attention_factor,
    "scaling.longrope-switch": longrope_switch,
    "decode.consistency": decode_consistency,
    "autograd.inverse-rotation": autograd_inverse_rotation,
    "sinusoidal.conformance": sinusoidal_conformance,
    "sinusoidal.norm": lemma_sinusoidal,
    "sinusoidal.relative-dot": lemma_sinusoidal,
    "sinusoidal.shift-matrix": lemma_sinusoidal,
    "sinusoidal.distinct": sinusoidal_distinct,
    "sinusoidal.length-independent": sinusoidal_length_independent,
    "additive.cross-term-leakage": lemma_additive_leakage,
    "learned.in-range": learned_table,
    "learned.out-of-range-raises": learned_table,
    "learned.parameter-count": learned_table,
    "attention.shift-invariance": relative_position,
    "attention.permutation-equivariance": attention_permutation,
    "attention.values-unrotated": attention_values,
    "attention.causal": attention_causal,
    "decode.attention-consistency": decode_attention,
    "attention.grouped-query": attention_grouped_query,
    "lemma.transpose-product": lemma_transpose_product,
    "lemma.cauchy-schwarz-rotation": lemma_cauchy_schwarz_rotation,
    "lemma.angle-error": lemma_angle_error,
    "lemma.pairing-conjugacy": lemma_pairing_conjugacy,
    "lemma.sinusoidal": lemma_sinusoidal,
    "lemma.additive-leakage": lemma_additive_leakage,
}


@lru_cache(maxsize=None)
def verify(proof_id: str) -> tuple[bool, str]:
    """(verified, account or the reason it failed); cached per process."""
    try:
        return True, PROOFS[proof_id]()
    except ProofError as e:
        return False, str(e)
