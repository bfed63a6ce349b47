"""Each invariant's formula as a sympy expression, rendered to LaTeX (Markdown) and to MathML (HTML) by
sympy's printers, so no formula is written twice; the frequency formulas are built by calling
:mod:`ropespec.spec.scaling`'s own functions on symbols, so what is shown is what the code computes and what
:mod:`ropespec.spec.proofs` proved. Letters: s a scale factor, c a shift of positions, ℓ a sequence length,
L the original (trained) length, r the rotary dim, d the head dim, b the base."""

from __future__ import annotations

import html
from dataclasses import dataclass

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

from ropespec.spec import definitions, proofs, scaling

f, R, dot, norm, PE = (sp.Function(n) for n in ("f", "R", "dot", "norm", "PE"))
x, y, q, k, p, m, n, c, a, b, i, r, L, d = sp.symbols("x y q k p m n c a b i r L d")
s = sp.Symbol("s", positive=True)
alpha, beta, theta, g = sp.symbols("alpha beta theta g")
theta_i, theta_p = sp.Symbol("theta_i"), sp.Symbol("θ'_i")  # theta': the scaled frequency
base = sp.Symbol("b", positive=True)
ell = sp.Symbol("ℓ")
G = sp.Symbol("g", commutative=False)  # an upstream gradient: written after the matrix that acts on it
pair, tail = sp.Function("pair"), sp.Function("tail_r")
j = sp.Symbol("j")


@dataclass(frozen=True)
class Formula:
    expr: sp.Basic
    where: tuple[str, str | sp.Basic] | None = None  # (LaTeX, plain words or a formula) of where it holds


def _eq(lhs, rhs):
    return sp.Eq(lhs, rhs, evaluate=False)


def _ladder(bb, ii):
    return scaling.ladder(bb, ii, r)


def _lowest(bb):
    return _ladder(bb, r / 2 - 1)


FORMULAS: dict[str, Formula] = {
    "rope.conformance": Formula(_eq(pair(f(x, p), i), R(p * theta_i) * pair(x, i)),
                                (r"\theta_i = " + sp.latex(_ladder(base, i)), sp.Eq(theta_i, _ladder(base, i), evaluate=False))),
    "rope.norm-per-pair": Formula(_eq(norm(pair(f(x, p), i)), norm(pair(x, i)))),
    "rope.relative-position": Formula(_eq(dot(f(q, m), f(k, n)), dot(f(q, m + c), f(k, n + c)))),
    "rope.identity-at-zero": Formula(_eq(f(x, 0), x)),
    "rope.composition": Formula(_eq(f(f(x, a), b), f(x, a + b))),
    "rope.linearity": Formula(_eq(f(alpha * x + beta * y, p), alpha * f(x, p) + beta * f(y, p))),
    "rope.locality": Formula(_eq(sp.Derivative(pair(f(x, p), i), sp.Symbol("x_j")), 0),
                             (r"j \notin \mathrm{pair}(i)", "j ∉ pair(i)")),
    "rope.partial-passthrough": Formula(_eq(tail(f(x, p)), tail(x)), (r"\mathrm{tail}_r = \text{dims } r \ldots d-1",
                                                                     "tail_r = dims r … d−1")),
    "axes.separation": Formula(_eq(sp.Derivative(pair(f(x, p), i), sp.Symbol("p_a")), 0),
                               (r"a \ne a(i)", "a ≠ a(i), the axis pair i turns with")),
    "axes.text-reduction": Formula(_eq(f(x, sp.Tuple(m, m, m)), sp.Function("f_1D")(x, m)),
                                   (r"\text{a shared ladder}", "a shared ladder")),
    "axes.one-axis": Formula(_eq(pair(f(x, m * sp.Symbol("e_a")), i), R(m * base ** (-2 * k / sp.Symbol("d_a"))) * pair(x, i)),
                             (r"i \text{ the } k\text{-th pair of axis } a\text{; other pairs unchanged}",
                              "i the k-th pair of axis a; other pairs unchanged")),
    "axes.equal-axes-differ": Formula(sp.Ne(f(x, sp.Tuple(m, m, m)), sp.Function("f_1D")(x, m)),
                                      (r"\text{per-axis ladders}", "per-axis ladders")),
    "contract.input-unmodified": Formula(_eq(sp.Symbol("x_after"), sp.Symbol("x_before"))),
    "contract.deterministic": Formula(_eq(sp.Function("call_1")(x, p), sp.Function("call_2")(x, p))),
    "contract.shape-finite": Formula(_eq(sp.Function("shape")(f(x, p)), sp.Function("shape")(x))),
    "scaling.bounded": Formula(sp.And(sp.Le(theta_i / s, theta_p), sp.Le(theta_p, theta_i)), (r"s \ge 1", "s ≥ 1")),
    "scaling.linear-positions": Formula(_eq(sp.Function("f_linear")(x, s * p), f(x, p))),
    "scaling.ntk-endpoints": Formula(_eq(_lowest(scaling.ntk_base(base, s, r)), _lowest(base) / s)),
    "scaling.band-edges": Formula(_eq(theta_p, scaling.mix(theta_i, sp.Symbol("m_i"), s)),
                                  (r"m_i \in [0, 1] \text{ rising with } i", "m_i ∈ [0, 1], rising with i")),
    "scaling.dynamic-length": Formula(_eq(sp.Symbol("b'"), scaling.dynamic_base(base, s, sp.Max(ell, L), L, r))),
    "scaling.attention-factor": Formula(_eq(norm(pair(f(x, p), i)), g * norm(pair(x, i)))),
    "scaling.longrope-switch": Formula(_eq(theta_p, sp.Piecewise((theta_i / sp.Symbol("long_i"), sp.StrictGreaterThan(ell, L)),
                                                                 (theta_i / sp.Symbol("short_i"), True)))),
    "decode.consistency": Formula(_eq(sp.Function("cached")(ell), sp.Function("fresh")(ell))),
    "kernel.rotation": Formula(_eq(pair(sp.Function("kernel")(x, sp.Symbol("C"), sp.Symbol("S")), i),
                                   sp.Tuple(*definitions.rotate(sp.Symbol("x_a"), sp.Symbol("x_b"), sp.Symbol("C_i"),
                                                                sp.Symbol("S_i")))),
                               (r"C_i, S_i = \mathrm{round}(\cos p\theta_i), \mathrm{round}(\sin p\theta_i)",
                                "C_i, S_i = cos pθ_i, sin pθ_i rounded to the output dtype")),
    "rope.layout": Formula(_eq(sp.Indexed(sp.IndexedBase("y"), sp.Symbol("b"), sp.Symbol("s"), sp.Symbol("h")),
                               f(sp.Indexed(sp.IndexedBase("x"), sp.Symbol("b"), sp.Symbol("s"), sp.Symbol("h")),
                                 sp.Indexed(sp.IndexedBase("P"), sp.Symbol("b"), sp.Symbol("s")))),
                           (r"\text{every batch row } b \text{, token } s \text{, head } h \text{, any strides}",
                            "every batch row b, token s, head h, any strides")),
    "kernel.qk": Formula(_eq(sp.Function("apply")(q, k, sp.Symbol("C"), sp.Symbol("S")),
                             sp.Tuple(sp.Function("kernel")(q, sp.Symbol("C"), sp.Symbol("S")),
                                      sp.Function("kernel")(k, sp.Symbol("C"), sp.Symbol("S")))),
                         (r"\text{each head, batch row and position}", "each head, batch row and position")),
    "table.angles": Formula(_eq(pair(sp.Function("table")(p), i), sp.Tuple(g * sp.cos(p * theta_p), g * sp.sin(p * theta_p)))),
    "autograd.inverse-rotation": Formula(_eq(sp.Function("grad_x")(dot(f(x, p), G)), R(-p * theta) * G)),
    "sinusoidal.conformance": Formula(_eq(pair(PE(p), i), sp.Tuple(*definitions.pe_pair(p * theta_i, sp.cos, sp.sin)))),
    "sinusoidal.norm": Formula(_eq(norm(PE(p)) ** 2, d / 2)),
    "sinusoidal.relative-dot": Formula(_eq(dot(PE(m), PE(n)), sp.Sum(sp.cos((m - n) * theta_i), (i, 0, d / 2 - 1)))),
    "sinusoidal.shift-matrix": Formula(_eq(PE(p + k), sp.Symbol("M_k") * PE(p))),
    "sinusoidal.distinct": Formula(sp.Ne(PE(m), PE(n)), (r"m \ne n,\ 0 \le m, n < \text{max\_position}",
                                                         "m ≠ n, 0 ≤ m, n < max_position")),
    "sinusoidal.length-independent": Formula(_eq(sp.Function("PE_ℓ")(p), PE(p))),
    "additive.cross-term-leakage": Formula(sp.Ne(dot(sp.Symbol("W_Q") * (x + PE(m)), sp.Symbol("W_K") * (y + PE(m + 2))),
                                                 dot(sp.Symbol("W_Q") * (x + PE(n)), sp.Symbol("W_K") * (y + PE(n + 2)))),
                                           (r"\text{some } m \ne n", "some m ≠ n")),
    "position-ids.text": Formula(_eq(sp.Function("P")(j + 1), sp.Function("P")(j) + sp.Symbol("(1, 1, 1)")),
                                 (r"j, j+1 \text{ text tokens of one run}, P(0) = (0, 0, 0)",
                                  "j, j + 1 text tokens of one run; P(0) = (0, 0, 0)")),
    "position-ids.grid": Formula(_eq(sp.Tuple(sp.Function("P_h")(k, i, j), sp.Function("P_w")(k, i, j)),
                                     sp.Tuple(sp.Symbol("s_0") + i, sp.Symbol("s_0") + j)),
                                 (r"(k, i, j) \text{ row-major in the merged grid}, s_0 \text{ the block's start}",
                                  "(k, i, j) row-major in the merged grid, s_0 the block's start")),
    "position-ids.time": Formula(_eq(sp.Function("P_t")(k), sp.Symbol("s_0") + sp.floor(
                                     k * sp.Symbol("Delta") * sp.Symbol("nu"))),
                                 (r"\Delta \text{ seconds per step}, \nu \text{ tokens per second (video\_time seconds)}",
                                  "Δ seconds per grid step, ν tokens per second (video_time seconds); a still image: "
                                  "P_t = s_0")),
    "position-ids.resume": Formula(_eq(sp.Function("start")(j), sp.Function("max_pos")(j) + 1),
                                   (r"\max\_pos(j) \text{ the largest position before token } j",
                                    "max_pos(j) the largest position, on any axis, before segment j")),
    "position-ids.batch": Formula(_eq(sp.Function("P_batch")(b, j + sp.Symbol("pad_b")), sp.Function("P_alone")(b, j))),
    "position-ids.decode": Formula(_eq(sp.Function("P_next")(b), sp.Function("max_pos")(b) + 1)),
    "learned.in-range": Formula(_eq(sp.Function("table")(p), sp.Function("row")(p)), (r"0 \le p < L", "0 ≤ p < L")),
    "learned.out-of-range-raises": Formula(_eq(sp.Function("table")(p), sp.Symbol("IndexError")), (r"p \ge L", "p ≥ L")),
    "learned.parameter-count": Formula(_eq(sp.Symbol("parameters"), L * d)),
    "attention.shift-invariance": Formula(_eq(sp.Function("attend")(q, k, sp.Symbol("v"), p + c),
                                              sp.Function("attend")(q, k, sp.Symbol("v"), p))),
    "attention.query-temperature": Formula(
        _eq(sp.Function("score_i")(sp.Symbol("j")),
            definitions.query_temperature(sp.Symbol("p_i"), sp.Symbol("beta"), sp.Symbol("L"), sp.Symbol("o"), sp.log,
                                          sp.floor)
            * sp.Function("dot")(sp.Function("R_p_i")(q), sp.Function("R_p_j")(k)) / sp.sqrt(d)),
        (r"o \in \{0, 1\}", "o in {0, 1}: 1 is Llama 4's p + 1, 0 Mistral's p")),
    "attention.permutation-equivariance": Formula(_eq(sp.Function("attend")(sp.Symbol("P") * q, sp.Symbol("P") * k,
                                                                            sp.Symbol("P") * sp.Symbol("v"), sp.Symbol("P") * p),
                                                      sp.Symbol("P") * sp.Function("attend")(q, k, sp.Symbol("v"), p))),
    "attention.values-unrotated": Formula(_eq(sp.Function("attend")(0, k, sp.Symbol("v"), p), sp.Function("mean")(sp.Symbol("v")))),
    "decode.attention-consistency": Formula(_eq(sp.Function("step")(sp.Symbol("t")),
                                                sp.Function("row_t")(sp.Function("attend_causal")(q, k, sp.Symbol("v"), p)))),
    "attention.grouped-query": Formula(_eq(sp.Function("kv_head")(sp.Symbol("h")),
                                           sp.floor(sp.Symbol("h") / (sp.Symbol("H") / sp.Symbol("KV"))))),
    "alibi.slopes": Formula(_eq(sp.Symbol("m_h"), 2 ** (-8 * (sp.Symbol("h") + 1) / sp.Symbol("H"))),
                            (r"H = 2^k;\ \text{otherwise } c = 2^{\lfloor \log_2 H \rfloor}\text{'s slopes, then every "
                             r"other of } 2c\text{'s}",
                             "H a power of two; otherwise the slopes of c = 2^floor(log2 H), then every other of 2c's")),
    "alibi.softmax-rows": Formula(_eq(sp.Function("softmax_j")(sp.Function("alibi")(i, j)),
                                      sp.Function("softmax_j")(definitions.alibi_bias(sp.Symbol("m_h"), i, j)
                                                               + sp.Symbol("c_i"))),
                                  (r"j \le i \text{ (causal)}", "j ≤ i (causal); -m_h |i - j| and every j, symmetric")),
    "alibi.relative-position": Formula(_eq(sp.Function("alibi")(i + c, j + c),
                                           sp.Function("alibi")(i, j) + sp.Symbol("c_i"))),
    "alibi.per-head": Formula(_eq(sp.Indexed(sp.IndexedBase("B"), sp.Symbol("b"), sp.Symbol("h"), i, j),
                                  definitions.alibi_bias(sp.Symbol("m_h"), sp.Indexed(sp.IndexedBase("Q"), sp.Symbol("b"), i),
                                                         sp.Indexed(sp.IndexedBase("K"), sp.Symbol("b"), j))
                                  + sp.Symbol("c_bhi")),
                              (r"\text{every batch row } b \text{ (its own positions } Q_b, K_b\text{), head } h",
                               "every batch row b (its own positions Q_b, K_b), head h")),
    "alibi.precision": Formula(sp.Le(sp.Abs(sp.Function("alibi")(i, j) - definitions.alibi_bias(sp.Symbol("m_h"), i, j)
                                            - sp.Symbol("c_i")),
                                     sp.Symbol("u") * sp.Abs(definitions.alibi_bias(sp.Symbol("m_h"), i, j))),
                               (r"0 \le i, j < \text{max\_position, the strict class}",
                                "0 ≤ i, j < max_position, the strict class (the default class adds u m_h P, P the call's largest position)")),
    "t5-bias.lookup": Formula(_eq(sp.Indexed(sp.IndexedBase("B"), sp.Symbol("h"), i, j),
                                  sp.Indexed(sp.IndexedBase("T"), sp.Function("bucket")(j - i), sp.Symbol("h"))),
                              (r"\text{every head } h \text{, query } i \text{, key } j",
                               "every head h, query i, key j")),
    "t5-bias.conformance": Formula(_eq(sp.Function("bucket")(sp.Symbol("delta")),
                                       sp.Symbol("h") + sp.floor(sp.log(sp.Abs(sp.Symbol("delta")) / sp.Symbol("h"))
                                                                 / sp.log(sp.Symbol("D") / sp.Symbol("h"))
                                                                 * sp.Symbol("h"))),
                                   (r"\delta = j - i,\ h \le |\delta| < D,\ n = 2h \text{ buckets of one sign}",
                                    "δ = j - i, h ≤ |δ| < D (max_distance), n = 2h buckets of one sign")),
    "t5-bias.exact-below": Formula(_eq(sp.Function("bucket")(sp.Symbol("delta")), sp.Abs(sp.Symbol("delta"))),
                                   (r"|\delta| < h", "|δ| < h = n/2 (plus n for δ > 0, bidirectional)")),
    "t5-bias.saturates": Formula(_eq(sp.Function("bucket")(sp.Symbol("delta")), 2 * sp.Symbol("h") - 1),
                                 (r"|\delta| \ge D", "|δ| ≥ D (plus n for δ > 0, bidirectional)")),
    "t5-bias.monotone": Formula(sp.Le(sp.Function("bucket")(sp.Symbol("delta")),
                                      sp.Function("bucket")(sp.Symbol("delta") + 1)),
                                (r"0 \le \delta", "0 ≤ δ, and mirrored for δ ≤ 0")),
    "t5-bias.sign-split": Formula(_eq(sp.Function("bucket_{bidirectional}")(sp.Symbol("delta")),
                                      sp.Symbol("n") + sp.Function("bucket_{one side}")(sp.Abs(sp.Symbol("delta")))),
                                  (r"\delta > 0,\ n = \text{num\_buckets} / 2",
                                   "δ > 0, n = num_buckets / 2; δ ≤ 0 uses the lower half, and unidirectional is 0 for δ > 0")),
    "xpos.conformance": Formula(_eq(sp.Function("score_i")(m, n),
                                    definitions.xpos_pair_score(sp.Symbol("zeta_i"), m, n, sp.Symbol("S"),
                                                                dot(R(m * theta_i) * pair(q, i), R(n * theta_i) * pair(k, i)))),
                                (r"\zeta_i = " + sp.latex(definitions.xpos_zeta(i, d, lambda a_, b_: a_ / b_, sp.Rational(2, 5))),
                                 sp.Eq(sp.Symbol("zeta_i"), definitions.xpos_zeta(i, d, lambda a_, b_: a_ / b_, sp.Rational(2, 5)),
                                       evaluate=False))),
    "xpos.relative-position": Formula(_eq(sp.Function("score")(m + c, n + c), sp.Function("score")(m, n))),
    "xpos.inverse-scale": Formula(_eq(sp.Function("score_i")(m, m), dot(pair(q, i), pair(k, i)))),
    "attention.causal": Formula(_eq(sp.Derivative(sp.Function("out_i")(sp.Symbol("v_j")), sp.Symbol("v_j")), 0),
                                (r"j > i", "j > i")),
    "model.positions": Formula(_eq(sp.Function("P")(sp.Symbol("b"), sp.Symbol("t")),
                                   sp.Sum(sp.Function("m")(sp.Symbol("b"), sp.Symbol("j")), (sp.Symbol("j"), 0,
                                                                                            sp.Symbol("t") - 1))),
                               (r"m(b, j) = 1 \text{ for a real token, } 0 \text{ for a pad; every mode: padded, "
                                r"chunked, decoding}", "m(b, j) = 1 for a real token, 0 for a pad; in every mode: a "
                                                       "padded batch, chunks, decoding steps")),
    "model.padding": Formula(_eq(sp.Function("logits_batch")(sp.Symbol("b"), sp.Symbol("t") + sp.Symbol("pad_b")),
                                 sp.Function("logits_alone")(sp.Symbol("b"), sp.Symbol("t")))),
    "model.cache": Formula(_eq(sp.Function("logits_schedule")(sp.Symbol("t")), sp.Function("logits_full")(sp.Symbol("t"))),
                           (r"\text{any schedule of chunks and steps}", "any schedule of chunks and one-token steps")),
    "model.canonical": Formula(_eq(sp.Function("F")(sp.Symbol("x")),
                                   sp.Function("F")(sp.Symbol("x"), sp.Function("canon")(sp.Symbol("x"))))),
    "model.length": Formula(_eq(sp.Function("logits_cached")(sp.Symbol("t")),
                                sp.Function("logits_full")(sp.Symbol("t"), sp.Symbol("x_0..t"))),
                            (r"t \text{ before, at and after the original length } L",
                             "t before, at and after the original length L; logits_full of the sequence up to t")),
    "model.stateless": Formula(_eq(sp.Function("F")(sp.Symbol("A"), sp.Symbol("after B")),
                                   sp.Function("F")(sp.Symbol("A"), sp.Symbol("fresh")))),
    "model.packing": Formula(_eq(sp.Function("logits_packed")(sp.Symbol("D_k"), sp.Symbol("t")),
                                 sp.Function("logits_alone")(sp.Symbol("D_k"), sp.Symbol("t"))),
                             (r"P(D_k, t) = t \text{ for every document } D_k \text{ of the row}",
                              "P(D_k, t) = t for every document D_k of the row; one sequence is never split")),
    "model.window": Formula(_eq(sp.Derivative(sp.Function("out_t")(sp.Symbol("x_j")), sp.Symbol("x_j")), 0),
                            (r"j \le t - w \text{ on a sliding layer of window } w",
                             "j ≤ t − w on a sliding layer of window w (w keys, itself included); nonzero on a global "
                             "layer")),
    "model.shift": Formula(_eq(sp.Function("F")(sp.Symbol("x"), sp.Function("shift")(sp.Symbol("cache_p"),
                                                                                    sp.Symbol("d"))),
                               sp.Function("F")(sp.Symbol("x"), sp.Symbol("cache_{p + d}")))),
    "model.offset": Formula(_eq(sp.Function("F")(sp.Symbol("x"), sp.Symbol("p") + sp.Symbol("c")),
                                sp.Function("F")(sp.Symbol("x"), sp.Symbol("p"))),
                            (r"\text{for every constant } c \text{, where the encoding is RoPE alone}",
                             "for every constant c, where the encoding is RoPE alone")),
    "model.drafts": Formula(_eq(sp.Function("logits_verify")(sp.Symbol("d_1..k")),
                                sp.Function("logits_steps")(sp.Symbol("d_1"), sp.Symbol("..."), sp.Symbol("d_k"))),
                            (r"\text{then } P(\text{next}) = n + j \text{ after } j \text{ of } k \text{ accepted}",
                             "then P(next) = n + j after j of k drafts accepted; assisted greedy = greedy")),
    "model.shards": Formula(_eq(sp.Function("P_r")(sp.Symbol("i")), sp.Function("P")(sp.Symbol("i"))),
                            (r"\text{every token } i \text{ owned by exactly one rank } r",
                             "every token i owned by exactly one rank r; P its position in its own document")),
}

#: the definitions the invariants are about, each built from the code that defines it
_phi, _xa, _xb = sp.symbols("phi x_a x_b")
DEFINITIONS: dict[str, tuple[sp.Basic, str]] = {
    "rotation": (_eq(R(_phi), proofs.R(_phi)), "ropespec.spec.definitions.rotate: (x_a, x_b) -> (x_a cos φ − x_b sin φ, x_a sin φ + "
                 "x_b cos φ), counter-clockwise; pair i at position p turns by φ = p θ'_i, then is scaled by the attention factor g"),
    "frequencies": (_eq(theta_i, _ladder(base, i)), "ropespec.spec.scaling.ladder, i = 0 … r/2 − 1; every scaling method changes θ_i below"),
    "linear": (_eq(theta_p, scaling.linear(theta_i, s)), "ropespec.spec.scaling.linear (position interpolation)"),
    "ntk": (_eq(sp.Symbol("b'"), scaling.ntk_base(base, s, r)), "ropespec.spec.scaling.ntk_base (static NTK-aware; not an HF type)"),
    "dynamic": (_eq(sp.Symbol("b'"), scaling.dynamic_base(base, s, sp.Max(ell, L), L, r)),
                "ropespec.spec.scaling.dynamic_base with ℓ = seq_len: the default table while ℓ ≤ L"),
    "yarn": (_eq(theta_p, scaling.mix(theta_i, sp.Symbol("ramp_i"), s)),
             "ropespec.spec.scaling.mix with ramp_i = clamp((i − low)/(high − low), 0, 1) (yarn_ramp), low/high from yarn_bounds: "
             "r ln(L/(2π β))/(2 ln b) at β_fast (32) and β_slow (1), floored/ceiled when truncate"),
    "yarn attention factor": (_eq(g, scaling.yarn_mscale(s, 1, proofs.SYM)), "ropespec.spec.scaling.yarn_mscale, for s > 1 (1 otherwise); "
                              "g(s, mscale)/g(s, mscale_all_dim) when both are given"),
    "llama3": (_eq(theta_p, scaling.mix(theta_i, 1 - scaling.llama3_gamma(L, sp.Symbol("lambda_i"), sp.Symbol("lo"),
                                                                           sp.Symbol("hi")), s)),
               "ropespec.spec.scaling.llama3_gamma, inside the band L/hi ≤ λ_i = 2π/θ_i ≤ L/lo; θ_i below it (λ < L/hi), θ_i/s above it"),
    "longrope": (_eq(theta_p, sp.Piecewise((theta_i / sp.Symbol("long_i"), sp.StrictGreaterThan(ell, L)),
                                           (theta_i / sp.Symbol("short_i"), True))),
                 "ropespec.spec.scaling.linear per pair with LongRoPE's factor lists; attention factor "
                 "sqrt(1 + ln s / ln L) (longrope_mscale)"),
}


class _MathML(MathMLPresentationPrinter):
    """sympy's presentation printer, keeping function names' case (R is not r), escaping relations and
    printing Piecewise as cases."""

    _REL = {"<": "&lt;", ">": "&gt;", "<=": "&#8804;", ">=": "&#8805;", "!=": "&#8800;", "==": "=", "=": "="}

    def _mi(self, text):
        el = self.dom.createElement("mi")
        el.appendChild(self.dom.createTextNode(text))
        return el

    def _mo(self, text):
        el = self.dom.createElement("mo")
        el.appendChild(self.dom.createTextNode(text))
        return el

    def _print_Function(self, e):
        mrow = self.dom.createElement("mrow")
        name = type(e).__name__
        if "_" in name:  # tail_r, PE_ℓ, call_1: a subscript
            head, sub = name.split("_", 1)
            msub = self.dom.createElement("msub")
            msub.appendChild(self._mi(head))
            msub.appendChild(self._mi(sub))
            mrow.appendChild(msub)
        else:
            mrow.appendChild(self._mi(name))
        mrow.appendChild(self._paren_comma_separated(*e.args))
        return mrow

    def _print_Relational(self, e):
        mrow = self.dom.createElement("mrow")
        mrow.appendChild(self._print(e.lhs))
        mrow.appendChild(self._mo(self._REL[e.rel_op]))
        mrow.appendChild(self._print(e.rhs))
        return mrow

    def _print_Piecewise(self, e):
        mrow = self.dom.createElement("mrow")
        mrow.appendChild(self._mo("{"))
        table = self.dom.createElement("mtable")
        for expr, cond in e.args:
            tr = self.dom.createElement("mtr")
            for cell in (self._print(expr), self._mi("otherwise") if cond is sp.true else self._print(cond)):
                td = self.dom.createElement("mtd")
                td.appendChild(cell)
                tr.appendChild(td)
            table.appendChild(tr)
        mrow.appendChild(table)
        return mrow


def _latex(expr) -> str:
    return sp.latex(expr, symbol_names={ell: r"\ell", theta_p: r"\theta'_{i}"})


def _mathml(expr) -> str:
    # numeric references for the two named ones sympy writes, so the output is XML as well as HTML
    return _MathML().doprint(expr).replace("&InvisibleTimes;", "&#8290;").replace("&dd;", "&#8518;")


def latex(invariant_id: str) -> str:
    fm = FORMULAS[invariant_id]
    return _latex(fm.expr) + (rf" \quad \text{{for }} {fm.where[0]}" if fm.where else "")


def mathml(invariant_id: str) -> str:
    fm = FORMULAS[invariant_id]
    out = _mathml(fm.expr)
    if fm.where:  # words as text, a formula (a sympy object) as MathML
        where = fm.where[1]
        shown = (f"<mtext>for&#xa0;</mtext>{_mathml(where)}" if isinstance(where, sp.Basic)
                 else f"<mtext>for {html.escape(where)}</mtext>")
        out = f"<mrow>{out}<mspace width='1em'/>{shown}</mrow>"
    return out


def definition_latex(name: str) -> str:
    return _latex(DEFINITIONS[name][0])


def definition_mathml(name: str) -> str:
    return _mathml(DEFINITIONS[name][0])


#: the error model's two formulas (ropespec.spec.tolerance's docstring), for the rendered spec: the rotation rounded in the
#: output dtype, and the bound every class's tolerance is
_ya, _ystar, _ct, _st, _c, _s, _u = sp.symbols("y_a y^* c̃ s̃ c s u")
_d1, _d2, _dphi = sp.symbols("delta_1 delta_2 Δφ")
_fl = sp.Function("fl")
TOLERANCE: dict[str, list[sp.Basic]] = {
    "rounded rotation": [_eq(_ya, _fl(_fl(sp.Symbol("x_a") * _ct) - _fl(sp.Symbol("x_b") * _st))),
                         _eq(_ct, _c * (1 + _d1)), _eq(_st, _s * (1 + _d2)), sp.Le(sp.Abs(sp.Symbol("delta")), _u)],
    "bound": [sp.Le(sp.Abs(sp.Symbol("y") - _ystar),
                    sp.Symbol("atol") + sp.Symbol("‖x‖") * (sp.Symbol("K_ROT") * sp.Symbol("u_out") + 2 * sp.Symbol("u_A")
                                                           + sp.Min(2, sp.Abs(_dphi)))),
              sp.Le(sp.Abs(_dphi), sp.Abs(sp.Symbol("phi")) * (sp.Symbol("u_A") * (1 + sp.Symbol("[p∉A]"))
                                                              + sp.Function("rel_theta")(sp.Symbol("E"))))],
}


def tolerance_latex(name: str) -> str:
    return r",\quad ".join(_latex(e) for e in TOLERANCE[name])


def tolerance_mathml(name: str) -> str:
    return "<mrow>" + "<mo>,</mo><mspace width='1em'/>".join(_mathml(e) for e in TOLERANCE[name]) + "</mrow>"


def printed() -> dict:
    """Every formula the spec shows, printed once by sympy: the definitions (name, note, TeX, MathML) in their order, each
    invariant's and the error model's (TeX, MathML). ``ropespec proofs --record`` writes it into the record
    (docs/proofs.json) beside the proofs that ran on the same definitions, so that ``ropespec spec`` renders without
    importing sympy; ``tests/test_spec.py`` holds the record to what this prints today."""
    return {"definitions": [{"name": name, "note": note, "tex": definition_latex(name), "mathml": definition_mathml(name)}
                            for name, (_, note) in DEFINITIONS.items()],
            "invariants": {inv: {"tex": latex(inv), "mathml": mathml(inv)} for inv in FORMULAS},
            "tolerance": {name: {"tex": tolerance_latex(name), "mathml": tolerance_mathml(name)} for name in TOLERANCE}}
