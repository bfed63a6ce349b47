"""Spec section "scaling": the length-extension methods, measured black-box.

Each property reads the frequencies and the attention factor off the implementation
(:mod:`ropespec.properties.probe`) and checks the relation its method promises. A measured frequency is
allowed the relative error the tolerance model gives the expectation's class at the largest probe
position (angle and inverse-frequency error, plus the rotation's rounding spread over p * theta).
Implementations whose expectation is of another type skip; factories draw expectations of the right type.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.contract import Failure, Unsupported
from ropespec.properties import probe
from ropespec.properties.assertions import assert_close
from ropespec.properties.numerics import output_bound
from ropespec.properties.cases import promised
from ropespec.properties.framework import rope_property
from ropespec.properties.strategies import positions, scaled_expectations, vectors
from ropespec.spec import methods, tolerance
from ropespec.spec.expectation import Expect
from ropespec.spec.scaling import original_length


def _cases(invariant, where=lambda method: True):
    """An implementation's own expectation, or expectations of the methods that promise ``invariant`` (and
    ``where`` holds of) for a factory."""
    kinds = methods.names(lambda m: invariant in m.promises and where(m))

    def cases(impl):
        e = (st.just(impl.expect) if impl.expect is not None
             else promised(impl, scaled_expectations(rope_types=kinds, dtype=impl.dtype)))
        return st.fixed_dictionaries({"expect": e})

    return cases


def _of_type(invariant, where=lambda method: True):
    """Skips an implementation whose expectation's method does not promise ``invariant``, and a factory that
    declines the first method :func:`_cases` draws (said at once, on that method's canonical example)."""
    drawn = methods.names(lambda m: invariant in m.promises and where(m))

    def applies(impl):
        e = impl.expect
        if e is not None and invariant not in e.method.promises:
            if not e.method.scales:
                return ("the expectation has no length-extension method (rope_type 'default'): the scaling properties "
                        "check what one does to the table")
            return (f"each checks what another length-extension method than the expectation's ({e.rope_type}) does "
                    f"to the table")
        canonical = list(methods.get(drawn[0]).examples(8, 1024).values())
        if e is None and canonical:
            try:
                impl.bind(Expect(head_dim=16, dtype=impl.dtype, max_position=8192, rope_scaling=canonical[0]))
            except Unsupported as err:
                return f"the implementation declines {drawn[0]}: {err}"
            except Exception:
                return None
        return None

    return applies


def _rel_tol(e, m: probe.Measured, seq_len=None) -> np.ndarray:
    """Relative error allowed on each measured frequency (see module docstring)."""
    th = reference.thetas(e, seq_len)
    p = np.array([m.max_position])
    return tolerance.angle_error(e, p, th)[0] / (p[0] * th) + tolerance.rotation_rtol(e) / (p[0] * th) + tolerance.PROBE_RTOL


_STRICTER_THAN_FLOAT32 = ("exact", "float64")


def _word(e, m: probe.Measured, miss: np.ndarray, seq_len=None) -> tuple[str, str | None]:
    """The word for measured frequencies that miss what the method promises by ``miss`` (relative, per
    pair; 0 where a pair is right). Checked against a class stricter than float32, a miss that the
    float32 class allows at every pair is precision, not scaling: the code forms its inverse frequencies
    or angles in float32 (transformers does). Otherwise it is ``scaling``."""
    if e.angle_dtype in _STRICTER_THAN_FLOAT32 or e.inv_freq_dtype in _STRICTER_THAN_FLOAT32:
        e32 = e.replace(angle_dtype="float32", inv_freq_dtype="float32")
        tol32 = _rel_tol(e32, m, seq_len)
        if np.all(miss <= tol32):
            i = int(np.argmax(miss / tol32))
            return "angle-precision", (f"every frequency is within what the float32 class allows "
                                       f"(pair {i} misses by {miss[i]:.2g} relative, float32 allows {tol32[i]:.2g}): "
                                       f"its inverse frequencies or angles are formed in float32, and the expected "
                                       f"class is {e.angle_dtype} angles, {e.inv_freq_dtype} inverse frequencies")
    return "scaling", None


def _miss(measured, want):
    """Relative difference of each measured frequency from ``want``."""
    return np.abs(measured - want) / np.abs(want)


def _default(e):
    return e.replace(rope_scaling=None)


def _first_bad(ok):
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else None


@rope_property("scaling.bounded",
               rule=("the frequency read off the output (PROBE_RTOL, 8 float64 ulp) plus the class's angle and "
                      "rotation error divided by p theta, relative to theta_i / s and theta_i"),
               cases=_cases("scaling.bounded"), skip_if=_of_type("scaling.bounded"), max_examples=8)
def test_bounded(bind, case):
    e = case["expect"]
    s = e.rope_scaling["factor"]
    seq = None
    if e.method.grows_with_length:  # beyond L dynamic scales by s l / L - (s - 1), growing with the length l
        L = original_length(e)
        seq = min(4 * L, e.max_position)
        s = s * seq / L - (s - 1)
    m = probe.measure(bind(e), e, seq_len=seq)
    th, tol = reference.thetas(_default(e)), _rel_tol(e, m, seq)
    i = _first_bad((m.thetas >= th / s * (1 - tol)) & (m.thetas <= th * (1 + tol)))
    if i is not None:
        word, note = _word(e, m, np.maximum(0.0, np.maximum((th / s - m.thetas) / (th / s), (m.thetas - th) / th)), seq)
        raise Failure(f"theta'[pair {i}]={float(m.thetas[i])!r}, but should lie in [theta/s, theta] = "
                      f"[{float(th[i] / s)!r}, {float(th[i])!r}] [{e.rope_type}, factor {s:g}, measured to p = {m.max_position}]",
                      word, evidence=note)
    lo, hi = th / s, th
    # the worst ratio to the bound checked: how far past [theta/s, theta] a frequency lies, in units of its
    # measurement tolerance (0 inside the interval, 1 at the edge of what is allowed)
    ratio = float(np.max(np.maximum(0.0, np.maximum((lo - m.thetas) / (tol * lo), (m.thetas - hi) / (tol * hi)))))
    if not e.method.grows_with_length:
        one = dict(e.to_dict()["rope_scaling"], factor=1.0)
        one.pop("attention_factor", None)
        e1 = e.replace(rope_scaling=one)
        try:
            f1 = bind.strict(e1)
        except Unsupported as err:  # a plain function: only its own expectation can be checked
            return ratio, f"factor 1 not checked: {err}"
        m1 = probe.measure(f1, e1)
        tol1 = _rel_tol(e1, m1)
        i = _first_bad(np.abs(m1.thetas - th) <= tol1 * th)
        if i is not None:
            word, note = _word(e1, m1, _miss(m1.thetas, th))
            raise Failure(f"theta'[pair {i}]={float(m1.thetas[i])!r} with factor 1, but should be the default "
                          f"{float(th[i])!r} [{e.rope_type}]", word, evidence=note)
        ratio = max(ratio, float(np.max(np.abs(m1.thetas - th) / (tol1 * th))))
    return ratio


def _linear_cases(impl):
    @st.composite
    def build(draw):
        e = draw(st.just(impl.expect) if impl.expect is not None
                 else promised(impl, scaled_expectations(rope_types=methods.promising("scaling.linear-positions"),
                                                         dtype=impl.dtype)), label="expect")
        s = int(e.rope_scaling["factor"])
        n = draw(st.integers(1, 4), label="n")
        q = draw(st.lists(positions(max_value=max(1, (e.max_position - 1) // s)), min_size=n, max_size=n), label="q")
        return {"expect": e, "q": np.array(q, dtype=np.int64), "x": draw(vectors(e, n), label="x")}

    return build()


def _linear_applies(impl):
    reason = _of_type("scaling.linear-positions")(impl)
    if reason:
        return reason
    if impl.mode != "factory":
        return "needs a factory: it compares the implementation's scaled and unscaled tables"
    if impl.expect is not None and float(impl.expect.rope_scaling["factor"]).is_integer() is False:
        return "needs an integer factor (positions s q must be integers)"
    return None


@rope_property("scaling.linear-positions",
               rule=("component_bound of both calls (f_linear at s p and f at p), added"),
               cases=_linear_cases, skip_if=_linear_applies, max_examples=10)
def test_linear_positions(bind, case):
    e, q, x = case["expect"], case["q"], case["x"]
    s = int(e.rope_scaling["factor"])
    e0 = _default(e)
    scaled, plain = bind(e)(x, s * q), bind(e0)(x, q)
    bound = output_bound(e, x, s * q) + output_bound(e0, x, q)
    return assert_close("f_linear(x, s q)", scaled, plain, bound, call=f"s={s}, q={q.tolist()}: f(x, q)",
                        dtype=e.dtype, diagnosis="scaling")


@rope_property("scaling.ntk-endpoints",
               rule=("as scaling.bounded, at pair 0 and pair r/2 - 1"),
               cases=_cases("scaling.ntk-endpoints"), skip_if=_of_type("scaling.ntk-endpoints"), max_examples=8)
def test_ntk_endpoints(bind, case):
    e = case["expect"]
    s = e.rope_scaling["factor"]
    m = probe.measure(bind(e), e)
    th, tol = reference.thetas(_default(e)), _rel_tol(e, m)
    ends = np.array([th[0], th[-1] / s])
    for i, want, what in ((0, th[0], "theta_0 unchanged"), (-1, th[-1] / s, "the lowest frequency divided by s")):
        if abs(m.thetas[i] - want) > tol[i] * want:
            miss = np.zeros_like(m.thetas)
            miss[[0, -1]] = _miss(m.thetas[[0, -1]], ends)
            word, note = _word(e, m, miss)
            raise Failure(f"theta'[pair {i % len(th)}]={float(m.thetas[i])!r}, but should be {float(want)!r} ({what}) "
                          f"[ntk, factor {s:g}, measured to p = {m.max_position}]", word, evidence=note)
    return float(abs(m.thetas[-1] - th[-1] / s) / (tol[-1] * th[-1] / s))


@rope_property("scaling.band-edges",
               rule=("as scaling.bounded, per pair below, inside and above the band"),
               cases=_cases("scaling.band-edges"), skip_if=_of_type("scaling.band-edges"),
               max_examples=8)
def test_band_edges(bind, case):
    e = case["expect"]
    s = e.rope_scaling["factor"]
    m = probe.measure(bind(e), e)
    th, exact, tol = reference.thetas(_default(e)), reference.thetas(e), _rel_tol(e, m)
    below = exact == th
    above = np.abs(exact - th / s) <= 1e-15 * th
    # one comparison for every pair, below, inside and above the band: the verdict and the worst ratio are both it
    err = np.abs(m.thetas - exact) / (tol * exact)
    i = _first_bad(err <= 1)
    if i is not None:
        what = ("unchanged (below the band)" if below[i] else "divided by s (above the band)" if above[i] else
                f"inside the band, between theta/s = {float(th[i] / s)!r} and theta = {float(th[i])!r}")
        word, note = _word(e, m, _miss(m.thetas, exact))
        raise Failure(f"theta'[pair {i}]={float(m.thetas[i])!r}, but should be {float(exact[i])!r}, {what}; "
                      f"{int(np.sum(err > 1))} of {len(err)} pairs off [{e.rope_type}, factor {s:g}]", word, float(err.max()),
                      evidence=note)
    ratio = m.thetas / th
    i = _first_bad(np.concatenate([ratio[1:] <= ratio[:-1] * (1 + tol[1:] + tol[:-1]), [True]]))
    if i is not None:
        raise Failure(f"theta'/theta rises from pair {i} ({ratio[i]:.6g}) to pair {i + 1} ({ratio[i + 1]:.6g}): "
                      f"the band must go monotonically from unchanged to divided by s [{e.rope_type}]", "scaling")
    return float(err.max())


@rope_property("scaling.dynamic-length",
               rule=("as scaling.bounded, at lengths L and beyond"),
               cases=_cases("scaling.dynamic-length"), skip_if=_of_type("scaling.dynamic-length"), max_examples=8)
def test_dynamic_length(bind, case):
    e = case["expect"]
    f, L = bind(e), original_length(e)
    served = e.rope_scaling.get("max_model_len")
    if served is not None:  # SGLang's policy: the served length's table at every length, short ones included
        for seq in (L // 2 + 1, L, min(2 * L, e.max_position)):
            want = reference.thetas(e, seq)
            m = probe.measure(f, e, seq_len=seq)
            tol = _rel_tol(e, m, seq)
            i = _first_bad(np.abs(m.thetas - want) <= tol * want)
            if i is not None:
                word, note = _word(e, m, _miss(m.thetas, want), seq)
                raise Failure(f"theta'[pair {i}]={float(m.thetas[i])!r} at sequence length {seq}, but should be the "
                              f"table of the served length {served}, {float(want[i])!r} [dynamic]", word, evidence=note)
        return None
    th = reference.thetas(_default(e))
    for seq in (L // 2 + 1, L):
        m = probe.measure(f, e, seq_len=seq)
        tol = _rel_tol(_default(e), m)
        i = _first_bad(np.abs(m.thetas - th) <= tol * th)
        if i is not None:
            word, note = _word(_default(e), m, _miss(m.thetas, th))
            raise Failure(f"theta'[pair {i}]={float(m.thetas[i])!r} at sequence length {seq}, but should be the "
                          f"default {float(th[i])!r} up to the original length {L} [dynamic]", word, evidence=note)
    lows = []
    for seq in (2 * L, 4 * L, 8 * L):
        m = probe.measure(f, e, seq_len=min(seq, e.max_position))
        lows.append((seq, m.thetas[-1], _rel_tol(e, m, seq)[-1]))
    for (s1, t1, e1), (s2, t2, e2) in zip(lows, lows[1:]):
        if t2 > t1 * (1 + e1 + e2):
            raise Failure(f"the lowest frequency rises from {float(t1)!r} at length {s1} to {float(t2)!r} at {s2}: the dynamic "
                          f"base must grow with the length [dynamic]", "scaling")
    return None


def _states_its_factor(method):  # a factory is drawn the methods whose attention factor is not 1
    return "attention_factor" in method.keys


@rope_property("scaling.attention-factor",
               rule=("attention_factor_allowance: norm_bound of a pair of norm g, as rope.norm-per-pair, plus g "
                      "norm_readoff_error(n): the factor is read off as the mean of n pair norms in float64"),
               cases=_cases("scaling.attention-factor", _states_its_factor), max_examples=8,
               skip_if=_of_type("scaling.attention-factor", _states_its_factor))
def test_attention_factor(bind, case):
    e = case["expect"]
    m = probe.measure(probe.text_view(bind(e), e), e, max_position=2)  # a multi-axis RoPE at text tokens
    g = reference.attention_factor(e)
    allowed = tolerance.attention_factor_allowance(e, g)
    if not abs(m.attention_factor - g) <= allowed:
        # a norm read along the expected pairs is only an attention factor when the structure is right: NaN
        # output, another convention, or no rotation at all is the root cause, and the framework names it
        raise Failure(f"||f(x, 1)_pair|| / ||x_pair||={float(m.attention_factor)!r}, but should be the attention factor "
                      f"{g!r} ({m.attention_factor / g:.6g} times it; relative difference {abs(m.attention_factor / g - 1):.2g}, "
                      f"allowed {allowed / g:.2g}) [{e.rope_type}]", "attention-factor")
    return float(abs(m.attention_factor - g) / allowed)


@rope_property("scaling.longrope-switch",
               rule=("as scaling.bounded, at seq_len L and L + 1"),
               cases=_cases("scaling.longrope-switch"), skip_if=_of_type("scaling.longrope-switch"), max_examples=8)
def test_longrope_switch(bind, case):
    e = case["expect"]
    f, L = bind(e), original_length(e)
    th = reference.thetas(_default(e))
    for seq in (L, L + 1):
        key = f"{e.method.variant(e, seq)}_factor"  # the policy's factors at this length (the method says which)
        want = th / np.array(e.rope_scaling[key], dtype=np.float64)
        m = probe.measure(f, e, seq_len=seq)
        tol = _rel_tol(e, m, seq)
        i = _first_bad(np.abs(m.thetas - want) <= tol * want)
        if i is not None:
            word, note = _word(e, m, _miss(m.thetas, want), seq)
            raise Failure(f"theta'[pair {i}]={float(m.thetas[i])!r} at sequence length {seq}, but should be theta / "
                          f"{key} = {float(want[i])!r} (original length {L}"
                          + (f", served length {e.rope_scaling['max_model_len']}" if "max_model_len" in e.rope_scaling
                             else "") + ") [longrope]", word, evidence=note)
    return None
