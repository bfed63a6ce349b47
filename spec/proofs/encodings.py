"""The sinusoidal encoding, additive encodings' leakage, and attention's shift and permutation invariance."""

from __future__ import annotations

import sympy as sp

from ropespec.spec import definitions
from ropespec.spec.expectation import Expect
from ropespec.spec.proofs.core import (BOUNDED, BOUNDED_N, MAX_D, ProofError, SYMBOLIC, _zero, c, dot, f, m, n, p,
                                       proves, thetas, vec, scores_shift_invariant)


def pe(pos, th) -> list:
    out = []
    for t in th:
        out += list(definitions.pe_pair(pos * t, sp.cos, sp.sin))
    return out


@proves("sinusoidal.norm", BOUNDED, ("PE: sin twice",))
def sinusoidal_norm():
    for d in range(2, MAX_D + 1, 2):
        _zero(dot(pe(p, thetas(d // 2)), pe(p, thetas(d // 2))) - sp.Rational(d, 2), f"d = {d}")
    return f"||PE(p)||^2 = d/2 with the definitions' pair (sin p theta_i, cos p theta_i); symbolic p, theta_i; every even d <= {MAX_D}"


@proves("sinusoidal.relative-dot", BOUNDED, ("PE: sin twice",))
def sinusoidal_relative_dot():
    for d in range(2, MAX_D + 1, 2):
        th = thetas(d // 2)
        _zero(dot(pe(m, th), pe(n, th)) - sum(sp.cos((m - n) * t) for t in th), f"d = {d}")
    return f"PE(m) . PE(n) = sum_i cos((m - n) theta_i): a function of m - n; symbolic m, n, theta_i; every even d <= {MAX_D}"


@proves("sinusoidal.shift-matrix", BOUNDED, ("PE: sin twice",))
def sinusoidal_shift_matrix():
    k = sp.Symbol("k", real=True)
    for d in range(2, MAX_D + 1, 2):
        th = thetas(d // 2)
        Mk = sp.diag(*[sp.Matrix([[sp.cos(k * t), sp.sin(k * t)], [-sp.sin(k * t), sp.cos(k * t)]]) for t in th])
        _zero(list(sp.Matrix(pe(p + k, th)) - Mk * sp.Matrix(pe(p, th))), f"d = {d}")
    return (f"PE(p + k) = M_k PE(p) with M_k = diag([[cos k theta_i, sin k theta_i], [-sin k theta_i, cos k theta_i]]), free of p; "
            f"symbolic p, k, theta_i; every even d <= {MAX_D}")


@proves("sinusoidal.distinct", SYMBOLIC, ("PE: sin twice",))
def sinusoidal_distinct():
    gap, th = sp.Symbol("k", real=True), sp.Symbol("theta", positive=True)
    diff = [x - y for x, y in zip(pe(p + gap, [th]), pe(p, [th]))]
    _zero(dot(diff, diff) - 4 * sp.sin(gap * th / 2) ** 2, "pair distance")
    return ("||PE_i(p + k) - PE_i(p)||^2 = 4 sin^2(k theta_i / 2): zero only when k theta_i is a multiple of 2 pi, so positions "
            "closer than the slowest pair's period 2 pi / theta_min never coincide; symbolic p, k, theta")


@proves("additive.cross-term-leakage", SYMBOLIC, ("R: shear", "R: plus a bias"))
def additive_leakage():
    th = [sp.Symbol("theta", positive=True)]
    xq, xk = vec("u", 2), vec("v", 2)
    W1, W2 = sp.Matrix(2, 2, sp.symbols("w0:4", real=True)), sp.Matrix(2, 2, sp.symbols("z0:4", real=True))

    def additive(mm, nn):
        return dot(W1 * (sp.Matrix(xq) + sp.Matrix(pe(mm, th))), W2 * (sp.Matrix(xk) + sp.Matrix(pe(nn, th))))

    # a witness: the additive score at the same gap differs between two starts
    witness = {sp.Symbol("theta", positive=True): 1, **{v: 1 for v in xq + xk}, **dict(zip(W1, (1, 0, 0, 1))),
               **dict(zip(W2, (1, 0, 0, 1)))}
    delta = (additive(0, 2) - additive(1, 3)).subs(witness)
    if sp.simplify(delta) == 0 or not sp.N(delta, 30).is_nonzero:
        raise ProofError("the additive score did not change with the start")
    e2 = Expect(head_dim=2)

    def rope(mm, nn):
        return dot(f(e2, list(W1 * sp.Matrix(xq)), mm, th), f(e2, list(W2 * sp.Matrix(xk)), nn, th))

    _zero(rope(m, n) - rope(m + c, n + c), "RoPE's score")
    return (f"additive: with W_Q = W_K = I, x = (1, 1), theta = 1 the score at gap 2 is {sp.N(additive(0, 2).subs(witness), 6)} at "
            f"start 0 and {sp.N(additive(1, 3).subs(witness), 6)} at start 1 (a witness that it leaks); RoPE's <f(W q, m), f(W k, n)> "
            f"equals its value at (m + c, n + c) for symbolic W, q, k, m, n, c, theta")


# -- attention ----------------------------------------------------------------------------------------
@proves("attention.shift-invariance", BOUNDED, ("R: shear", "R: plus a bias"))
def attention_shift_invariance():
    scores_shift_invariant("scores")
    return (f"every score <f(q_i, p_i), f(k_j, p_j)> is unchanged when all positions shift by c (as rope.relative-position, "
            f"every even d <= {MAX_D}); the output softmax(S) V is a function of the scores and V, so it is unchanged")


@proves("attention.permutation-equivariance", BOUNDED_N, ("softmax: causal mask always",))
def attention_permutation():
    N = 3
    S = [[sp.Symbol(f"s_{i}{j}", real=True) for j in range(N)] for i in range(N)]
    V = sp.Matrix(N, 2, lambda i, j: sp.Symbol(f"v_{i}{j}", real=True))
    P = sp.Matrix([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    PS = P * sp.Matrix(S) * P.T
    lhs = sp.Matrix(definitions.attention_weights(PS.tolist(), sp.exp)) * (P * V)
    rhs = P * (sp.Matrix(definitions.attention_weights(S, sp.exp)) * V)
    _zero(list(lhs - rhs), "equivariance")
    return ("softmax(P S P^T) P V = P softmax(S) V with the definitions' softmax, for the cyclic permutation P of n = 3 rows "
            "(symbolic scores, which move with their rows and positions, and values)")
