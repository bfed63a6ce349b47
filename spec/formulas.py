"""Each invariant's formula as a sympy expression: rendered to LaTeX (Markdown) and to MathML (HTML)
by sympy's own printers, so no formula is written twice."""

from __future__ import annotations

import sympy as sp

f, R, dot, norm, PE = (sp.Function(n) for n in ("f", "R", "dot", "norm", "PE"))
x, y, q, k, p, m, n, s, a, b, i, r, L = sp.symbols("x y q k p m n s a b i r L")
alpha, beta, theta, g = sp.symbols("alpha beta theta g")
theta_i, theta_p = sp.Symbol("theta_i"), sp.Symbol("theta^s_i")  # theta^s: the scaled frequency
base, ell = sp.symbols("b ell")
pair = sp.Function("pair")

FORMULAS: dict[str, sp.Basic] = {
    "rope.conformance": sp.Eq(pair(f(x, p), i), R(p * theta_i) * pair(x, i)),
    "rope.norm-per-pair": sp.Eq(norm(pair(f(x, p), i)), norm(pair(x, i))),
    "rope.relative-position": sp.Eq(dot(f(q, m), f(k, n)), dot(f(q, m + s), f(k, n + s))),
    "rope.identity-at-zero": sp.Eq(f(x, 0), x),
    "rope.composition": sp.Eq(f(f(x, a), b), f(x, a + b)),
    "rope.linearity": sp.Eq(f(alpha * x + beta * y, p), alpha * f(x, p) + beta * f(y, p)),
    "rope.locality": sp.Eq(sp.Derivative(pair(f(x, p), i), sp.Symbol("x_j")), 0),
    "rope.partial-passthrough": sp.Eq(sp.Function("tail_r")(f(x, p)), sp.Function("tail_r")(x)),
    "contract.input-unmodified": sp.Eq(sp.Symbol("x_after"), sp.Symbol("x_before")),
    "contract.deterministic": sp.Eq(sp.Function("first_call")(x, p), sp.Function("second_call")(x, p)),
    "contract.shape-finite": sp.Eq(sp.Function("shape")(f(x, p)), sp.Function("shape")(x)),
    "scaling.bounded": sp.And(sp.Le(theta_i / s, theta_p), sp.Le(theta_p, theta_i)),
    "scaling.linear-positions": sp.Eq(sp.Function("f_linear")(x, s * p), f(x, p)),
    "scaling.ntk-endpoints": sp.Eq((base * s ** (r / (r - 2))) ** (-(r - 2) / r), base ** (-(r - 2) / r) / s),
    "scaling.band-edges": sp.Eq(theta_p, sp.Symbol("m_i") * theta_i / s + (1 - sp.Symbol("m_i")) * theta_i),
    "scaling.dynamic-length": sp.Eq(sp.Symbol("b'"), base * (s * ell / L - (s - 1)) ** (r / (r - 2))),
    "scaling.attention-factor": sp.Eq(norm(pair(f(x, p), i)), g * norm(pair(x, i))),
    "scaling.longrope-switch": sp.Eq(theta_p, sp.Piecewise((theta_i / sp.Symbol("long_i"), ell > L),
                                                           (theta_i / sp.Symbol("short_i"), True))),
    "decode.consistency": sp.Eq(sp.Function("cache")(ell), sp.Function("fresh")(ell)),
    "autograd.inverse-rotation": sp.Eq(sp.Function("grad_x")(dot(f(x, p), sp.Symbol("g"))), R(-p * theta) * sp.Symbol("g")),
    "sinusoidal.conformance": sp.Eq(pair(PE(p), i), sp.Matrix([sp.sin(p * theta_i), sp.cos(p * theta_i)])),
    "sinusoidal.norm": sp.Eq(norm(PE(p)) ** 2, sp.Symbol("d") / 2),
    "sinusoidal.relative-dot": sp.Eq(dot(PE(m), PE(n)), sp.Sum(sp.cos((m - n) * theta_i), (i, 0, sp.Symbol("d") / 2 - 1))),
    "sinusoidal.shift-matrix": sp.Eq(PE(p + k), sp.Symbol("M_k") * PE(p)),
    "sinusoidal.distinct": sp.Ne(PE(m), PE(n)),
    "sinusoidal.length-independent": sp.Eq(sp.Function("PE_ell")(p, ell), PE(p)),
    "additive.cross-term-leakage": sp.Ne(dot(sp.Symbol("W_Q") * (x + PE(m)), sp.Symbol("W_K") * (y + PE(m + 2))),
                                         dot(sp.Symbol("W_Q") * (x + PE(n)), sp.Symbol("W_K") * (y + PE(n + 2)))),
    "learned.in-range": sp.Eq(sp.Function("table")(p), sp.Function("row")(p)),
    "learned.out-of-range-raises": sp.Eq(sp.Function("table")(L), sp.Symbol("IndexError")),
    "learned.parameter-count": sp.Eq(sp.Symbol("parameters"), L * sp.Symbol("d")),
    "attention.shift-invariance": sp.Eq(sp.Function("attend")(q, k, sp.Symbol("v"), p + s), sp.Function("attend")(q, k, sp.Symbol("v"), p)),
    "attention.permutation-equivariance": sp.Eq(sp.Function("attend")(sp.Symbol("P") * q, sp.Symbol("P") * k, sp.Symbol("P") * sp.Symbol("v"), sp.Symbol("P") * p),
                                                sp.Symbol("P") * sp.Function("attend")(q, k, sp.Symbol("v"), p)),
    "attention.values-unrotated": sp.Eq(sp.Function("attend")(0, k, sp.Symbol("v"), p), sp.Function("mean")(sp.Symbol("v"))),
    "decode.attention-consistency": sp.Eq(sp.Function("step")(sp.Symbol("t")), sp.Function("row_t")(sp.Function("attend_causal")(q, k, sp.Symbol("v"), p))),
    "attention.grouped-query": sp.Eq(sp.Function("kv_head")(sp.Symbol("h")), sp.floor(sp.Symbol("h") / (sp.Symbol("H") / sp.Symbol("KV")))),
    "attention.causal": sp.Eq(sp.Derivative(sp.Function("out_i")(sp.Symbol("v_j")), sp.Symbol("v_j")), 0),
}


def latex(invariant_id: str) -> str:
    return sp.latex(FORMULAS[invariant_id])


def mathml(invariant_id: str) -> str:
    return sp.mathml(FORMULAS[invariant_id], printer="presentation")
