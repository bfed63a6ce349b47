"""Positional biases: ALiBi, T5's buckets and xPos."""

from __future__ import annotations

import sympy as sp

from ropespec.spec import definitions
from ropespec.spec.expectation import Expect
from ropespec.spec.proofs.core import DEFINITION, SYMBOLIC, TESTED, _sign, _zero, c, declare, dot, f, m, n, proves, vec


@proves("alibi.softmax-rows", SYMBOLIC, ("ALiBi: sign flipped",))
def alibi_softmax_rows():
    slope, cc = sp.Symbol("m", positive=True), sp.Symbol("c", real=True)
    i_ = sp.Symbol("i", real=True)
    keys = sp.symbols("j0:3", real=True)
    row = [definitions.alibi_bias(slope, i_, jj) for jj in keys]
    shifted = definitions.attention_weights([[v + cc for v in row]], sp.exp)[0]
    _zero([x - y for x, y in zip(shifted, definitions.attention_weights([row], sp.exp)[0])], "softmax(b + c)")
    # BLOOM's m j: the bias plus the row's constant m i, whatever the key
    _zero([slope * jj - definitions.alibi_bias(slope, i_, jj) - slope * i_ for jj in keys], "BLOOM's m j")
    sym = [definitions.alibi_bias(slope, i_, jj, symmetric=True) for jj in keys]
    _zero([x - y for x, y in zip(definitions.attention_weights([[v + cc for v in sym]], sp.exp)[0],
                                 definitions.attention_weights([sym], sp.exp)[0])], "softmax(b + c), symmetric")
    return ("softmax over a row of the definitions' bias -m (i - j) (and -m |i - j|) is unchanged by a constant c added "
            "to the row, and BLOOM's m j is the bias plus the row's constant m i; symbolic m > 0, i, three keys j, c")


@proves("alibi.relative-position", SYMBOLIC, ("ALiBi: product of positions",))
def alibi_relative_position():
    slope = sp.Symbol("m", positive=True)
    i_, j_, cc = sp.symbols("i j c", real=True)
    for symmetric in (False, True):
        shifted = definitions.alibi_bias(slope, i_ + cc, j_ + cc, symmetric)
        _zero(sp.simplify(shifted - definitions.alibi_bias(slope, i_, j_, symmetric)), f"symmetric={symmetric}")
    return "the definitions' bias at (i + c, j + c) equals it at (i, j), causal and symmetric; symbolic m > 0, i, j, c"


@proves("t5-bias.monotone", SYMBOLIC, ("T5: log ratio inverted",))
def t5_monotone():
    dist, md = sp.symbols("x D", positive=True)
    me = sp.Symbol("h", positive=True, integer=True)  # n = 2h buckets of one sign: max_exact = n // 2 = h
    logged = definitions.t5_log_bucket(dist, 2 * me, md, lambda a_, b2: sp.log(a_ / b2))
    # d/dx of the log-spaced bucket: h / (x ln(D / h)), positive for x > 0 and D = h (1 + w), w > 0
    w = sp.Symbol("w", positive=True)
    _sign(sp.diff(logged, dist).subs(md, me * (1 + w)), "positive", "d bucket / d distance")
    _zero(logged.subs(dist, me), "the log range starts at bucket 0 past max_exact")
    return ("the definitions' log-spaced bucket ln(x / h) / ln(D / h) (2h - h) of n = 2h buckets increases with the "
            "distance x (its derivative is positive for every D > h) and is 0 at x = h, so bucket h follows the last exact "
            "one, h - 1; floor and the min with n - 1 keep it non-decreasing; symbolic x, h, D")


@proves("t5-bias.saturates", SYMBOLIC, ("T5: log ratio inverted",))
def t5_saturates():
    md = sp.Symbol("D", positive=True)
    me = sp.Symbol("h", positive=True, integer=True)  # n = 2h: max_exact = h
    logged = definitions.t5_log_bucket(md, 2 * me, md, lambda a_, b2: sp.log(a_ / b2))
    _zero(sp.simplify(logged - me), "the bucket of max_distance")
    return ("at x = D (max_distance) the definitions' log-spaced bucket of n = 2h buckets is h, so its bucket h + h = n is "
            "past the last and the min makes it n - 1, as for every x > D (t5-bias.monotone); symbolic h, D")


def _xpos_score(mm, nn):
    """Pair 0's xPos score for symbolic q, k, theta, zeta, scale base: RoPE's rotated dot (the definitions' f) times
    the definitions' decay."""
    zeta, sb = sp.Symbol("zeta", positive=True), sp.Symbol("S", positive=True)
    th = [sp.Symbol("theta", positive=True)]
    e2 = Expect(head_dim=2)
    qv, kv = vec("q", 2), vec("k", 2)
    return definitions.xpos_pair_score(zeta, mm, nn, sb, dot(f(e2, qv, mm, th), f(e2, kv, nn, th))), dot(qv, kv)


@proves("xpos.relative-position", SYMBOLIC, ("xPos: keys scaled alike", "R: shear"))
def xpos_relative_position():
    _zero(sp.simplify(_xpos_score(m + c, n + c)[0] - _xpos_score(m, n)[0]), "score(m + c, n + c) - score(m, n)")
    return ("a pair's xPos score, zeta^((m - n) / S) times the definitions' R(m theta) q . R(n theta) k, is unchanged "
            "when m and n shift by c; symbolic q, k, m, n, c, theta, zeta > 0, S > 0")


@proves("xpos.inverse-scale", SYMBOLIC, ("xPos: keys scaled alike", "R: shear"))
def xpos_inverse_scale():
    score, plain = _xpos_score(m, m)
    _zero(sp.simplify(score - plain), "score(m, m) - q . k")
    return ("at equal positions a pair's xPos score is q . k: the scales zeta^(m / S) and zeta^(-m / S) cancel and so do "
            "the rotations; symbolic q, k, m, theta, zeta > 0, S > 0")


declare("xpos.conformance", DEFINITION, "the score is the definition (ropespec.spec.definitions.xpos_pair_score and xpos_zeta); "
        "the property checks code against it, with RoPE's rotation from the mpmath reference")
declare("alibi.slopes", DEFINITION, "the published rule is the definition (ropespec.spec.definitions.alibi_slopes, Press et al.'s "
        "get_slopes); the property checks code's slopes against it, and recovers them from a bias")
declare("alibi.per-head", DEFINITION, "each batch row and head is alibi.softmax-rows' definition over that row's "
        "positions and that head's slope; the property checks every (row, head) of a batched call against it")
declare("alibi.precision", TESTED, "a property of code: the precision the bias is formed in; the error bound is "
        "ropespec.spec.tolerance.bias_bound")
declare("t5-bias.conformance", DEFINITION, "ropespec.spec.definitions.t5_bucket is T5's published function; exact, with float32's "
        "rounding next to a whole log-spaced value allowed (ropespec.reference.biases.t5_buckets)")
declare("t5-bias.lookup", DEFINITION, "the lookup is the definition: the table's entry at T5's bucket of key - query "
        "(transformers' compute_bias); the property checks code against it with a table whose entries name themselves")
declare("t5-bias.exact-below", DEFINITION, "ropespec.spec.definitions.t5_bucket: a distance below max_exact is its own bucket")
declare("t5-bias.sign-split", DEFINITION, "ropespec.spec.definitions.t5_sign_split: the halves of the buckets by the sign of j - i")
