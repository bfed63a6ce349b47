"""The angles' faults, measured: each pair's frequency against the ladder, the base, a factor, a table fixed at one
length, a scaling method's known mistakes, the precision the table was formed in."""

from __future__ import annotations

import json
import math

import numpy as np

from ropespec import reference
from ropespec.properties import probe
from ropespec.spec import methods, tolerance
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect
from ropespec.spec.scaling import original_length
from ropespec.spec.tables import table_variant
from ropespec.properties.diagnose.findings import _close, _measured, _with
from ropespec.properties.diagnose.large_positions import _wrap


def scaling_variants(e: Expect, seq_len: int | None):
    """Tables a mistaken implementation of e's scaling method would produce: (tag, what, thetas), the unscaled table
    first and then the method's own mistakes (:meth:`ropespec.spec.methods.ScalingMethod.mistakes`). Read by the diagnosis,
    the fingerprint and the perturbation grid alike (one list of the mistakes real ports made)."""
    th0 = reference.thetas(e.replace(rope_scaling=None))
    yield "unscaled", "the unscaled default table", th0
    yield from e.method.mistakes(e, seq_len, reference.thetas, th0)


def frequencies_off(f, e: Expect) -> str | None:
    """The pairs whose frequency, read off f along e's pairs (at text tokens for a multi-axis RoPE), is not e's, in
    words; None where every pair's is."""
    fr, th, tol, _ = _measured(probe.text_view(f, e), e)
    with np.errstate(divide="ignore", invalid="ignore"):
        miss = np.abs(fr.thetas - th) / np.abs(th)
    off = np.flatnonzero(~(miss <= tol))
    if not off.size:
        return None
    shown = ", ".join(f"pair {i} at {fr.thetas[i]:.6g} for {th[i]:.6g}" for i in off[:4]) + (", ..." if off.size > 4 else "")
    return f"{off.size} of {th.size} pairs turn at another frequency than expected ({shown})"


def _linear_in_p(e: Expect, fr, th) -> bool:
    """The angles grow linearly with the position (unwrapping while doubling p agreed with itself): an angle
    read off an output in dtype D is off by about u_D rad, so theta_i measured at the last position P is off by
    about u_D / (P theta_i), the same words in bfloat16 as in float32."""
    noise = 20 * tolerance.unit_roundoff(e.dtype) / (fr.max_position * np.abs(th))
    return not np.any(fr.precision > np.maximum(1e-3, noise))


def _frequency_model(f, e: Expect, fr, th, tol, seq) -> tuple[str, str] | None:
    with np.errstate(divide="ignore", invalid="ignore"):  # a pair of frequency 0 has no ratio: inf or nan
        return _frequency_model_of(f, e, fr, th, tol, seq)


def _frequency_model_of(f, e: Expect, fr, th, tol, seq) -> tuple[str, str] | None:
    if not _linear_in_p(e, fr, th):
        return _wrap(f, e)
    ratio = fr.thetas / th
    if _close(ratio, 2.0, tol):
        return "double-rotation", f"every pair turns by exactly 2 p theta_i (theta'/theta = {np.median(ratio):.9g})"
    # the sign of the angles, a constant offset of the positions and the frequencies are three fields measured
    # apart: each one found wrong is said, the first as the word and the others after it
    found = []
    if np.all(ratio < 0):  # every pair turns the other way (and, below, perhaps not by its own frequency)
        turn = (f"pair 0 by {fr.thetas[0]:.6g} rad per position, expected +{th[0]:.6g}, both as the expectation's "
                f"pairs read")
        found.append(("direction", f"every pair turns by -p theta_i ({turn}); code trained that way (nanochat's) is "
                                   f"checked with \"direction\": \"reverse\"" if e.direction == "forward" else
                                   f"every pair turns by +p theta_i, RoFormer's direction, where the expectation's is "
                                   f"{e.direction} ({turn})"))
        fr = probe.Frequencies(**{**fr.__dict__, "thetas": -fr.thetas})  # phi = theta' (p + c): c keeps its sign
    own = _own_offsets(e)  # the offset each pair's axis states (Inkling 2's and Llama 4 vision's 1): none is a fault
    c = float(np.median(fr.offset - own))
    # said "shifted by c" (naming reads c back from it)
    if abs(c) >= 0.5 and np.all(np.abs(fr.offset - own - c) <= 1e-3 * max(1.0, abs(c))):
        stated = f" past the {float(np.median(own)):g} the expectation states" if np.any(own) else ""
        found.append(("position-offset", f"at p = 0 every pair is already turned by {c + float(np.median(own)):.6g} "
                                         f"theta_i: positions are shifted by {round(c)}{stated}"))
    rest = _frequencies_model(f, e, fr, th, tol, seq)
    if not found:
        return rest
    for then in found[1:] + [rest]:
        found[0] = _with(found[0], then)
    return found[0]


def _own_offsets(e: Expect) -> np.ndarray:
    """Per pair, the offset of the axis it turns with (axes_offset; 0 for 1-D RoPE and unshifted axes)."""
    if not e.multi_axis or e.axes_offset is None:
        return np.zeros(e.n_pairs)
    return np.array([e.axes_offset[a] for a in e.pair_axes()], dtype=np.float64)


def _frequencies_model(f, e: Expect, fr, th, tol, seq) -> tuple[str, str] | None:
    """The model of the frequencies themselves (a wrap, a rounded table, a method's mistake, another base or
    factor), the angle's sign and offset being known."""
    ratio = fr.thetas / th
    wrapped = _wrap(f, e)  # a table that wraps misleads the unwrapping of the angles, which may still look linear
    if wrapped or _close(fr.thetas, th, tol):  # right at the length read: a dynamic table must move past it
        return wrapped or _fixed_table(f, e, fr, tol, seq)
    rounded = _rounded_table(fr.thetas, th, tol, e)
    if rounded:
        return rounded
    if e.method.scales:  # a known mistake of the method first, then the method's table at another base
        for tag, what, tv in scaling_variants(e, seq):
            if _close(fr.thetas, tv, tol):
                return e.method.mistake_words.get(tag, "scaling"), (f"the frequencies match {what} (every pair to {float(np.min(tol)):.0e}"
                                   + (f"..{float(np.max(tol)):.0e}, as closely as it can be measured" if np.max(tol) > np.min(tol) else "")
                                   + f"), not the configured {e.rope_type}")
        # a table that stays put where e's moves with the length fits some base at the one length read: it is said
        # as that, unless one factor of every frequency says more (the NTK base's factor taken as a divisor)
        fixed = _fixed_table(f, e, fr, tol, seq)
        if fixed is None:
            other = _other_base(fr.thetas, e, tol, seq) or _other_factor(fr.thetas, e, tol, seq) or \
                _other_base(fr.thetas, e, tol, seq, and_factor=True)
            if other:
                return other
        elif _one_factor(ratio, tol) is None:
            return fixed
    if not e.method.scales:  # another base, normalising dim, index shift or factor of the one ladder, a method
        return (_other_base(fr.thetas, e, tol, seq) if e.multi_axis else None) or _ladder(fr.thetas, e, tol) or \
            (other_curve(fr.thetas, e, tol, seq) if not e.multi_axis else None) or _formed_in(fr.thetas, th, tol, e)
    factor = _one_factor(ratio, tol)
    if factor is not None:
        return "scaling", (f"every frequency is the {e.rope_type} table's divided by {1 / factor:.6g}"
                           f"{_ntk_divisor(e, 1 / factor, tol)} (to {_spread(ratio):.0e}): linear scaling by "
                           f"{1 / factor:.6g}, not {e.rope_type}")
    return other_curve(fr.thetas, e, tol, seq) or _formed_in(fr.thetas, th, tol, e)


def _ntk_divisor(e: Expect, divisor: float, tol) -> str:
    """' (s^(r/(r-2)) = ..., the NTK-aware base's factor, taken as a divisor)' where ``divisor`` is that factor."""
    s_, r = (e.rope_scaling or {}).get("factor"), e.rotary_dim
    if s_ and r > 2 and _close(divisor, s_ ** (r / (r - 2)), np.max(tol)):
        return f" (s^(r/(r-2)) = {s_:g}^({r}/{r - 2}), the NTK-aware base's factor, taken as a divisor)"
    return ""


#: original lengths a fitted curve is tried at, after the expectation's own (the common context lengths)
FIT_LENGTHS = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


def curves(e: Expect, theta: np.ndarray, lengths=FIT_LENGTHS):
    """Expectations of every scaling method of the registry whose table could be ``theta`` (the frequencies of e's
    pairs, measured) at e's base, simplest first: each method's own fit (``ScalingMethod.fit``) from how much slower
    the first and the last pair turn than the unscaled ladder's, the length-free methods first, then each original
    length. Read by the diagnosis and the fingerprint alike: the measured model names the method whatever method
    was expected."""
    plain = e.replace(rope_scaling=None)
    th0 = reference.rates(plain)
    if len(theta) != len(th0) or np.any(np.asarray(theta) <= 0):
        return
    s_first, s_last = th0[0] / theta[0], th0[-1] / theta[-1]
    own = [original_length(e)] if e.method.scales else []
    for L in (None, *dict.fromkeys(own + list(lengths))):
        for m in methods.REGISTRY.values():
            for scaling in m.fit(s_first, s_last, L):
                try:
                    yield plain.replace(rope_scaling=scaling)
                except ValueError:
                    continue


def other_curve(theta: np.ndarray, e: Expect, tol: np.ndarray, seq) -> tuple[str, str] | None:
    """("scaling", evidence) where the measured frequencies are another scaling method's table, or the same method's
    with other parameters (:func:`curves`), at e's base: the method and its parameters said, whatever e expects."""
    for cand in curves(e, theta):
        if cand.rope_scaling == e.rope_scaling or cand.method is e.method and not cand.method.scales:
            continue
        if _close(theta, reference.rates(cand, seq), tol):
            got = cand.to_dict()["rope_scaling"]
            said = "no scaling" if got is None else f"{got['rope_type']} {json.dumps(got)}"
            uniform = _one_factor(np.asarray(theta) / reference.rates(e.replace(rope_scaling=None), seq), tol)
            note = _ntk_divisor(e, 1 / uniform, tol) if uniform else ""  # every pair divided by one factor
            want = f"the configured {e.rope_type}" if e.method.scales else "none configured"
            return "scaling", (f"the frequencies are {said}{note} (every pair to {float(np.max(tol)):.0e}), not "
                               f"{want}")
    return None


def _rounded_table(theta: np.ndarray, th: np.ndarray, tol: np.ndarray, e: Expect) -> tuple[str, str] | None:
    """("angle-precision", evidence) where the measured frequencies are the expected table rounded to a coarser dtype
    than the class promises (inverse frequencies formed or stored in bfloat16, float16 or float32): the right
    frequencies, rounded. None otherwise."""
    coarse = [d for d in ("float32", "float16", "bfloat16")  # finest first; those the class does not allow
              if e.inv_freq_dtype == "exact" or tolerance.unit_roundoff(d) > tolerance.unit_roundoff(e.inv_freq_dtype)]
    for d in coarse:
        want = round_to(th, d)
        if np.any(want != th) and _close(theta, want, tol) and not _close(theta, th, tol):
            i = int(np.argmax(np.abs(want - th) / th))
            return "angle-precision", (f"the frequencies are the {e.rope_type} table rounded to {d} (pair {i} turns at "
                                       f"{theta[i]:.9g}, {d} of {th[i]:.9g}): inverse frequencies formed or stored in "
                                       f"{d}, expected {e.inv_freq_dtype}")
    return None


def _formed_in(theta: np.ndarray, th: np.ndarray, tol: np.ndarray, e: Expect) -> tuple[str, str] | None:
    """("angle-precision", evidence) where every measured frequency is within a few roundings of a coarser dtype of
    the expected table, and that dtype's rounding shows (the method's formula evaluated in it): said only after no
    other base, ladder or method has fitted, since a base off by 1e-3 also stays within bfloat16's roundings."""
    coarse = [d for d in ("float32", "float16", "bfloat16")
              if e.inv_freq_dtype == "exact" or tolerance.unit_roundoff(d) > tolerance.unit_roundoff(e.inv_freq_dtype)]
    miss = np.abs(theta / th - 1)
    for d in coarse:  # formed in d through the method's formula: several roundings, each of at most u_d
        u = tolerance.unit_roundoff(d)
        if np.all(miss <= 8 * u + tol) and np.max(miss) >= u / 4:
            i = int(np.argmax(miss))
            return "angle-precision", (f"every frequency is within 8 u of {d} of the {e.rope_type} table (pair {i} off "
                                       f"by {miss[i]:.2g} relative, {miss[i] / u:.2g} u): inverse frequencies formed in "
                                       f"{d}, expected {e.inv_freq_dtype}")
    return None


def _fixed_table(f, e: Expect, fr, tol: np.ndarray, seq) -> tuple[str, str] | None:
    """("scaling", evidence) where e's table depends on the call's length (dynamic NTK) and f's does not: the
    frequencies read at the original length and at max_position are the same, where e's differ. Before another
    base is fitted at one length: a table that stays put fits some base there, and is still no dynamic table."""
    top = e.max_position
    if seq is None or seq >= top or table_variant(e, top) == table_variant(e, None):
        return None
    th_seq, th_top = reference.thetas(e, seq), reference.thetas(e, top)
    if _close(th_top, th_seq, tol):
        return None
    at_top, _, tol_top, _ = _measured(f, e, seq=top)
    if not _close(at_top.thetas, fr.thetas, np.maximum(tol, tol_top)):
        return None
    i = int(np.argmax(np.abs(th_top / th_seq - 1)))
    return "scaling", (f"the frequencies are the same at call lengths {seq} and {top} (pair {i} turns at "
                       f"{fr.thetas[i]:.6g} at both), where the {e.rope_type} table changes past the original length "
                       f"{original_length(e)} (pair {i}: {th_seq[i]:.6g} at {seq}, {th_top[i]:.6g} at {top}): the "
                       f"table does not follow the call's length")


def _other_base(theta: np.ndarray, e: Expect, tol: np.ndarray, seq, *, and_factor: bool = False
                ) -> tuple[str, str] | None:
    """("base", evidence) where the measured frequencies are e's scaling method's at another base: the base read off
    the pairs its method leaves unchanged (the longest ladder prefix), rounded as configs round it. ``and_factor``:
    the method's table at that base and another factor (two fields at once), tried once neither alone fits."""
    if np.any(theta <= 0) or len(theta) < 3:
        return None
    # each pair's ladder index i over its ladder's R (1-D: i over r; per-axis ladders: i over d_a): ln theta = -(2i/R)
    # ln b; the base from the fastest third of the pairs, which no scaling method moves
    lad = np.array(e.ladder(), dtype=np.float64)
    expo = 2 * lad[:, 0] / lad[:, 1]
    order = np.argsort(expo, kind="stable")
    lt = np.log(theta)
    # ln theta_j = c - expo_j ln b along the fastest pairs, as far as they stay on one line (a method's band starts
    # where they leave it; c is ln 1/s for a method that divides every pair, 0 otherwise); per-axis ladders share
    # their exponents, so the line starts with three distinct ones
    k = next((n for n in range(3, len(order) + 1) if len(np.unique(expo[order[:n]])) >= 3), None)
    if k is None:
        return None
    while k < len(order):
        slope, c = np.polyfit(expo[order[:k]], lt[order[:k]], 1)
        resid = float(np.max(np.abs(lt[order[:k]] - (c + slope * expo[order[:k]]))))
        if abs(lt[order[k]] - (c + slope * expo[order[k]])) > 1e-9 + 10 * resid:
            break
        k += 1
    base = float(np.exp(-np.polyfit(expo[order[:k]], lt[order[:k]], 1)[0]))
    for digits in (3, 4, 6, 8, 12):
        b = float(f"{base:.{digits}g}")
        if b <= 1 or abs(b / e.rope_theta - 1) <= 1e-9:
            continue
        try:
            other = e.replace(rope_theta=b)
        except ValueError:
            return None
        if not and_factor and _close(theta, reference.thetas(other, seq), tol):
            what = (f"{e.rope_type}'s table" if e.method.scales else
                    f"the {e.axes_kind()} ladders" if e.multi_axis else "the ladder")
            rest = f": the {e.rope_type} scaling itself is right" if e.method.scales else ""
            return "base", (f"the frequencies are {what} of base {b:g} (every pair to {float(np.max(tol)):.0e}), "
                            f"expected base {e.rope_theta:g}{rest}")
        # the base read off the pairs no method moves, and the method's factor off the slowest: two fields at once
        factor = _other_factor(theta, other, tol, seq) if and_factor and e.method.scales else None
        if factor:
            return _with(("base", f"the fastest pairs are the ladder of base {b:g}, expected base {e.rope_theta:g}"),
                         factor)
    return None


def dynamic_fit(f, plain: Expect, top: int, past: int) -> tuple[float, int, list[int]] | None:
    """(factor s, original length L, the lengths read) of a dynamic NTK table, from its base b'(l) = b (s l / L -
    (s - 1))^(r/(r-2)) read at two lengths past ``past`` (``plain``: the expectation of its pairs and base, unscaled),
    rounded as configs round them, where the dynamic table of (s, L) is what was read; None otherwise. The one fit
    the diagnosis and the fingerprint both read."""
    r = plain.rotary_dim
    lengths = [top, (past + top) // 2]
    if lengths[1] <= past or r <= 2:
        return None
    q = []
    for n in lengths:
        fr, _, _, _ = _measured(f, plain, seq=n)
        if np.any(fr.thetas <= 0):
            return None
        slope = np.polyfit(2 * np.arange(len(fr.thetas)) / r, np.log(fr.thetas), 1)[0]
        q.append((math.exp(-slope) / plain.rope_theta) ** ((r - 2) / r))
    a = (q[0] - q[1]) / (lengths[0] - lengths[1])  # q(l) = s l / L - (s - 1): slope s / L, intercept 1 - s
    s = 1 - (q[0] - a * lengths[0])
    if s <= 1 + 1e-9 or a <= 0:
        return None
    s, L = float(f"{s:.4g}"), int(round(s / a))
    try:
        cand = plain.replace(rope_scaling={"rope_type": "dynamic", "factor": s, "original_max_position_embeddings": L})
    except ValueError:
        return None
    fr, _, tol, _ = _measured(f, plain, seq=top)
    return (s, L, lengths) if _close(fr.thetas, reference.thetas(cand, top), tol) else None


def _length_fields(f, e: Expect) -> tuple[str, str] | None:
    """("scaling", evidence) where a dynamic NTK table, right at the original length, grows with the length by
    another factor or from another original length: its base b'(l) = b (s l / L - (s - 1))^(r/(r-2)) read at two
    lengths past L gives s and L, and the fields that differ are named."""
    if not e.method.grows_with_length:
        return None
    s, L, top = e.rope_scaling["factor"], original_length(e), e.max_position
    fit = dynamic_fit(f, e.replace(rope_scaling=None), top, L)
    if fit is None:
        return None
    s_got, L_got, lengths = fit
    fields = [f"factor {s_got:g} where {s:g} is expected"] * (abs(s_got / s - 1) > 1e-3) + \
             [f"original_max_position_embeddings {L_got} where {L} is expected"] * (abs(L_got / L - 1) > 1e-3)
    if not fields:
        return None
    return "scaling", (f"the dynamic table grows with the length as one of {' and '.join(fields)} (read at lengths "
                       f"{lengths[1]} and {top}; right up to the original length)")


def _other_factor(theta: np.ndarray, e: Expect, tol: np.ndarray, seq) -> tuple[str, str] | None:
    """("scaling", evidence) where the measured frequencies are e's method with another factor: the factor read off
    the slowest pair, which every method divides by it, rounded as configs round it."""
    s = (e.rope_scaling or {}).get("factor")
    if not s or theta[-1] <= 0:
        return None
    guess = float(reference.thetas(e.replace(rope_scaling=None))[-1] / theta[-1])
    for digits in (2, 3, 4, 6):
        f = float(f"{guess:.{digits}g}")
        if f <= 1 or abs(f / s - 1) <= 1e-9:
            continue
        try:
            other = e.replace(rope_scaling={**e.to_dict()["rope_scaling"], "factor": f})
        except ValueError:
            return None
        if _close(theta, reference.thetas(other, seq), tol):
            return "scaling", (f"the frequencies are {e.rope_type}'s with factor {f:g} (every pair to "
                               f"{float(np.max(tol)):.0e}), expected factor {s:g}")
    return None


def _spread(ratio: np.ndarray) -> float:
    return float(np.max(np.abs(np.log(ratio / np.median(ratio)))))


def _one_factor(ratio: np.ndarray, tol: np.ndarray) -> float | None:
    """The factor every measured frequency is off by, when it is one and the same for every pair (to the
    precision they are read to) and not 1; None otherwise."""
    if len(ratio) < 2 or np.any(ratio <= 0):
        return None
    c = float(np.median(ratio))
    if abs(c - 1) <= float(np.max(tol)) or not _close(ratio, np.full_like(ratio, c), tol):
        return None
    return c


def _denominator(k: float, lnb: float, r: int) -> str:
    """Where the ladder fitted (ln theta_i = -2 i k) is also the expected base's over another whole denominator D
    (theta_i = base^(-2i/D): k D = ln base), that reading in words: the two are one ladder, and which field the code
    got wrong, its base or the dim its exponent is over (an exponent over d - 2), no measurement tells apart."""
    if k <= 0:
        return ""
    D = round(lnb / k)
    if D == r or not 2 <= D <= 4 * r or abs(k * D - lnb) > 1e-6 * lnb:
        return ""
    return (f", or, the same ladder, base {math.exp(lnb):g} with its exponent over {D} where the rotary dim is {r} "
            f"(theta_i = base^(-2i/{D}))")


def _ladder(theta: np.ndarray, e: Expect, tol: float) -> tuple[str, str] | None:
    """Fit ln theta_i = a - 2 i k over the pairs: k tells the base (or the dim the exponent is
    normalised by), a tells an index shift or a constant factor."""
    if np.any(theta <= 0) or len(theta) < 2:
        return None
    i = np.arange(len(theta))
    slope, a = np.polyfit(i, np.log(theta), 1)
    k = -slope / 2  # ln(base) / normalising dim
    resid = float(np.max(np.abs(np.log(theta) - (a + slope * i))))
    # another ladder explains them only where it fits ten times closer than the expected one does: frequencies
    # rounded to a low dtype scatter about the expected ladder, and a line through them fits no better
    off = float(np.max(np.abs(np.log(theta) - np.log(reference.thetas(e)))))
    if resid > min(1e-3, 0.1 * off):
        return None
    lnb, r, d = math.log(e.rope_theta), e.rotary_dim, e.head_dim
    if abs(a) <= 1e-6:
        if d != r and abs(k * d - lnb) <= 1e-6 * lnb:
            return "rotary-dim", f"theta_i = base^(-2i/{d}): the exponent is normalised by head_dim {d}, not the rotary dim {r}"
        return "base", (f"the frequencies fit base {math.exp(k * r):.6g} (to {resid:.0e}), expected {e.rope_theta:g}"
                        f"{_denominator(k, lnb, r)}")
    shift = a / (-2 * k) if k else 0.0
    if abs(k * r - lnb) <= 1e-6 * lnb and abs(shift - round(shift)) <= 1e-6 and round(shift):
        return "base", f"theta'_i = theta_(i+{round(shift)}) of base {e.rope_theta:g}: the frequency index is shifted by {round(shift)}"
    if abs(k * r - lnb) <= 1e-6 * lnb:
        return "scaling", f"every frequency is the expected one times {math.exp(a):.9g}"
    b, s = math.exp(k * r), math.exp(-a)
    if s > 1 + 1e-6:  # another base and one factor: two fields, the base first (the ladder), the factor listed
        return "base", (f"the frequencies fit base {b:.6g} divided by {s:.6g} (to {resid:.0e}): base {b:.6g} where "
                        f"{e.rope_theta:g} is expected, and linear scaling by {s:.6g} where none is (two fields: "
                        f"rope_theta and rope_scaling)")
    return None
