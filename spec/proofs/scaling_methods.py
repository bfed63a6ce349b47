"""The scaling methods' frequencies and attention factors, and autograd's inverse rotation."""

from __future__ import annotations

import sympy as sp

from ropespec.spec import scaling
from ropespec.spec.expectation import Expect
from ropespec.spec.proofs.core import (BOUNDED, L, MAX_D, SYM, SYMBOLIC, _sign, _zero, base, dot, expects, f, g, m, n,
                                       p, proves, r_, s, thetas, u, vec)


def _mix_sides(theta, mm, sf):
    """theta' - theta/s and theta - theta' for theta' = scaling.mix(theta, m, s)."""
    tp = scaling.mix(theta, mm, sf)
    return tp - theta / sf, theta - tp


@proves("scaling.bounded", SYMBOLIC, ("linear: theta * s", "mix: divides by s^2", "ntk: exponent r/(r-4)"))
def scaling_bounded():
    th = sp.Symbol("theta", positive=True)
    sf = 1 + u
    # the mixing methods (yarn: m = the clamped ramp; llama3: m = 1 - gamma, 0 or 1 outside the band)
    w0, w1 = sp.symbols("w0 w1", nonnegative=True)
    mm = w0 / (w0 + w1 + sp.Symbol("eps", positive=True))  # any m in [0, 1)
    for mval, what in ((mm, "m in [0, 1)"), (sp.Integer(1), "m = 1"), (sp.Integer(0), "m = 0")):
        lo_side, hi_side = _mix_sides(th, mval, sf)
        _sign(lo_side, "nonnegative", f"mix, {what}: theta' >= theta/s")
        _sign(hi_side, "nonnegative", f"mix, {what}: theta' <= theta")
    _zero(scaling.mix(th, mm, 1) - th, "mix at s = 1")
    # linear
    _zero(scaling.linear(th, sf) - th / sf, "linear is theta/s")
    _zero(scaling.linear(th, 1) - th, "linear at s = 1")
    # ntk and dynamic: ln theta'_i = ln theta_i - t ln s' with t = 2i/(r-2) in [0, 1]
    t0, t1 = sp.symbols("t0 t1", nonnegative=True)
    tt = t0 / (t0 + t1 + sp.Symbol("eps", positive=True))  # any t in [0, 1)
    i = tt * (r_ - 2) / 2  # pair index i = t (r-2)/2 in [0, r/2 - 1]
    lam = sp.Symbol("lambda", nonnegative=True)  # ln s' >= 0
    for name, new_base, s_eff, grows in (
        ("ntk", scaling.ntk_base(base, sf, r_), sf, False),
        ("dynamic", scaling.dynamic_base(base, s, L * (1 + u), L, r_), scaling.dynamic_factor(s, L * (1 + u), L), True),
    ):
        log_t = sp.expand_log(sp.log(scaling.ladder(new_base, i, r_)), force=True)
        log_theta = sp.expand_log(sp.log(scaling.ladder(base, i, r_)), force=True)
        drop = sp.simplify(sp.expand_log(log_theta - log_t, force=True) if grows else
                           (log_theta - log_t).subs(sp.log(s_eff), lam))
        if grows:  # s' = s l/L - (s - 1) = 1 + s u >= 1 at l = L(1 + u)
            _zero(s_eff - (1 + s * u), "dynamic's effective factor")
            drop = sp.simplify(drop.subs(sp.log(1 + s * u), lam))
        _zero(drop - tt * lam, f"{name}: ln theta_i - ln theta'_i = t ln s'")
        _sign(tt * lam, "nonnegative", f"{name}: theta' <= theta")
        _sign((1 - tt) * lam, "nonnegative", f"{name}: theta' >= theta/s' for t <= 1")
    _zero(scaling.ntk_base(base, 1, r_) - base, "ntk at s = 1")
    return ("theta' between theta/s and theta for s >= 1: mix (yarn, llama3) theta' - theta/s = (1 - m) theta (s-1)/s >= 0 and "
            "theta - theta' = m theta (s-1)/s >= 0 for m in [0, 1]; linear theta/s; ntk and dynamic (effective s' = s l/L - (s-1) "
            "= 1 + s(l-L)/L >= 1 for l >= L) ln theta_i - ln theta'_i = t ln s' with t = 2i/(r-2) in [0, 1]; s = 1 gives theta "
            "(mix, linear, ntk). Symbolic theta, s, m, b, r, L, l")


@proves("scaling.linear-positions", BOUNDED, ("linear: theta * s",))
def linear_positions():
    for e in expects(partial=True):
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        scaled = [scaling.linear(t, s) for t in th]
        _zero([l_ - r__ for l_, r__ in zip(f(e, x, s * p, scaled), f(e, x, p, th))], f"{e.convention}, d = {e.head_dim}")
    return f"f with theta_i/s at position s p equals f with theta_i at p, symbolic x, p, s, theta_i; every even d <= {MAX_D}"


@proves("scaling.ntk-endpoints", SYMBOLIC, ("ntk: b s", "ntk: exponent r/(r-4)", "ladder: b^(-i/r)"))
def ntk_endpoints():
    new = scaling.ntk_base(base, s, r_)
    _zero(scaling.ladder(new, 0, r_) - 1, "theta'_0 = 1")
    last = r_ / 2 - 1
    ratio = sp.powsimp(sp.powdenest(sp.expand_power_base(
        scaling.ladder(new, last, r_) / scaling.ladder(base, last, r_), force=True), force=True), force=True)
    _zero(sp.simplify(ratio) - 1 / s, "theta'_(r/2-1) = theta_(r/2-1) / s")
    return "with scaling.ntk_base b' = b s^(r/(r-2)): theta'_0 = 1 and theta'_(r/2-1) = theta_(r/2-1) / s, symbolic b, s, r"


@proves("scaling.band-edges", SYMBOLIC, ("mix: inverted", "yarn: betas swapped", "yarn: ramp (i - low)/high",
                                                       "llama3: lo and hi swapped"))
def band_edges():
    th = sp.Symbol("theta", positive=True)
    sf = 1 + u
    # the share kept moves from theta (m = 0) to theta/s (m = 1), monotonically in m
    _zero(scaling.mix(th, 0, sf) - th, "m = 0 keeps theta")
    _zero(scaling.mix(th, 1, sf) - th / sf, "m = 1 divides by s")
    mm = sp.Symbol("m", real=True)
    _sign(-sp.diff(scaling.mix(th, mm, sf), mm), "nonnegative", "theta' decreases as m grows")
    # yarn: low < high (beta_fast > beta_slow, b > 1), the ramp is 0 at low, 1 at high and grows with i
    bs, gap, lb = sp.Symbol("beta_slow", positive=True), sp.Symbol("k", positive=True), sp.Symbol("ln_b", positive=True)
    low, high = scaling.yarn_bounds(r_, L, base, bs * sp.exp(gap), bs, SYM)
    width = sp.expand_log(high - low, force=True).subs(sp.log(base), lb)
    _sign(width, "positive", "yarn: high - low > 0 for beta_fast > beta_slow")
    lo_, w = sp.Symbol("low", real=True), sp.Symbol("w", positive=True)
    i = sp.Symbol("i", real=True)
    _zero(scaling.yarn_ramp(lo_, lo_, lo_ + w), "yarn ramp at low")
    _zero(scaling.yarn_ramp(lo_ + w, lo_, lo_ + w) - 1, "yarn ramp at high")
    _sign(sp.diff(scaling.yarn_ramp(i, lo_, lo_ + w), i), "positive", "yarn ramp grows with i")
    # llama3: the share divided, 1 - gamma, is 0 at wavelength L/hi and 1 at L/lo, and grows with the wavelength
    lo, dh, lam = sp.Symbol("lo", positive=True), sp.Symbol("dh", positive=True), sp.Symbol("lambda", positive=True)
    hi = lo + dh
    share = 1 - scaling.llama3_gamma(L, lam, lo, hi)
    _zero(share.subs(lam, L / hi), "llama3: nothing divided at wavelength L/hi")
    _zero(share.subs(lam, L / lo) - 1, "llama3: all divided at wavelength L/lo")
    _sign(sp.diff(share, lam), "positive", "llama3: the share divided grows with the wavelength")
    _zero(scaling.wavelength(th, SYM) - 2 * sp.pi / th, "wavelength")
    return ("theta' = mix(theta, m, s) is theta at m = 0, theta/s at m = 1 and decreasing in m (s >= 1); yarn: high - low = "
            "r ln(beta_fast/beta_slow)/(2 ln b) > 0 and m = the ramp, 0 at low, 1 at high, increasing in i; llama3: m = 1 - gamma, "
            "0 at wavelength L/hi, 1 at L/lo, increasing in the wavelength (so in i). Symbolic theta, s, b, r, L, betas, lo, hi")


@proves("scaling.dynamic-length", SYMBOLIC, ("dynamic: factor s l/L",))
def dynamic_length():
    l_ = sp.Symbol("l", positive=True)
    _zero(scaling.dynamic_factor(s, L, L) - 1, "s' = 1 at l = L")
    _zero(scaling.dynamic_base(base, s, L, L, r_) - base, "b' = b at l = L")
    _sign(sp.diff(scaling.dynamic_factor(s, l_, L), l_), "positive", "s' grows with l")
    # theta_i = b'^(-2i/r): ln theta_i = -(2i/r) ln b', decreasing in b' for i > 0; b' = b s'^(r/(r-2)) grows with s'
    i, lb = sp.Symbol("i", positive=True), sp.Symbol("ln_bp", positive=True)
    bp = sp.Symbol("bp", positive=True)
    _sign(-sp.diff(sp.expand_log(sp.log(scaling.ladder(bp, i, r_ + 2)), force=True), bp), "positive",
          "theta_i decreases as the base grows")
    sp_ = sp.Symbol("sp", positive=True)
    _sign(sp.diff(scaling.ntk_base(base, sp_, r_ + 2), sp_), "positive", "the base grows with s' (r > 2)")
    return ("dynamic: s' = s l/L - (s - 1) is 1 at l = L (b' = b: the default table; below L the type uses it by definition) "
            "and d s'/dl = s/L > 0; b' = b s'^(r/(r-2)) grows with s' and theta_i = b'^(-2i/r) falls as b' grows, so every "
            "theta_i only decreases with the length. Symbolic s, l, L, b, r > 2, i > 0")


@proves("scaling.attention-factor", BOUNDED, ("R: doubled", "R: shear", "R: plus a bias",
                                                                 "factor: applied twice", "yarn mscale: 0.1 ln s + 1.1"))
def attention_factor():
    for e in expects(partial=True):
        x, th = vec("x", e.head_dim), thetas(e.n_pairs)
        y = f(e, x, p, th, gain=g)
        for (aa, bb), (oa, ob) in zip(e.pairs(), e.out_pairs()):
            _zero(y[oa] ** 2 + y[ob] ** 2 - g**2 * (x[aa] ** 2 + x[bb] ** 2), f"{e.convention}, d = {e.head_dim}")
    # the factors are 1 without scaling (s = 1), so an unscaled table is the default one
    _zero(scaling.yarn_mscale(1, sp.Symbol("mscale", positive=True), SYM) - 1, "yarn's g(1) = 1")
    _zero(scaling.longrope_mscale(1, L, SYM) - 1, "longrope's factor at s = 1")
    q, k = vec("q", 2), vec("k", 2)
    e2 = Expect(head_dim=2)
    _zero(dot(f(e2, q, m, [th := sp.Symbol("theta", positive=True)], g), f(e2, k, n, [th], g))
          - g**2 * dot(q, f(e2, k, n - m, [th])), "logits")
    return (f"||f(x, p)_pair|| = g ||x_pair|| for every pair with the factor g of the definitions, and <f_g(q, m), f_g(k, n)> = "
            f"g^2 <q, f(k, n - m)>: logits carry g^2; yarn's g and longrope's factor are 1 at s = 1; symbolic x, p, g, "
            f"theta_i, mscale, L; every even d <= {MAX_D}")


@proves("autograd.inverse-rotation", BOUNDED, ("R: reflection", "R: shear", "R: plus a bias"))
def autograd_inverse_rotation():
    for e in expects(partial=True):
        d = e.head_dim
        x, gv, th = vec("x", d), vec("g", d), thetas(e.n_pairs)
        J = sp.Matrix(f(e, x, p, th)).jacobian(x)
        back = f(e, gv, -p, th)  # the inverse rotation
        if e.convention == "rope_interleave":  # y = P f_interleaved(x): J^T g = f_interleaved(P^T g, -p)
            back = f(e.replace(convention="interleaved"), [gv[e.output_dims()[j]] for j in range(d)], -p, th)
        _zero(list(J.T * sp.Matrix(gv) - sp.Matrix(back)), f"{e.convention}, d = {d}, r = {e.rotary_dim}")
    return ("the gradient of <f(x, p), g> is J^T g = f(g, -p), the inverse rotation, with pass-through dims getting g "
            f"unchanged (rope_interleave: read back in the input layout); symbolic x, g, p, theta_i; every even d <= {MAX_D}")
