"""Naming the fault: a diagnosis earned by evidence measured on the implementation.

When a property fails without a diagnosis of its own, :func:`diagnose` probes the implementation
(:mod:`ropespec.properties.probe`) and returns a word of the fixed vocabulary with one sentence of evidence in
numbers, or None when nothing fits (the caller then says ``unknown``). The checks go from the most to
the least structural: an output that does not depend on x alone, the convention, the norms, the direction
and size of the angles, a position offset or wrap, the scaling method, the base.
"""

from __future__ import annotations

import math

import numpy as np

from ropespec import reference
from ropespec.implementations.contract import Fault
from ropespec.properties import precision, probe
from ropespec.properties.numerics import output_bound
from ropespec.spec import tolerance
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect
from ropespec.spec.scaling import original_length
from ropespec.spec.tables import table_variant

def _close(a, b, tol) -> bool:
    """Frequencies equal to a relative tolerance, modulo 2 pi (integer positions cannot tell theta
    from theta + 2 pi)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # nan (a pair of frequency 0's ratio) compares as not close
        diff = np.angle(np.exp(1j * (a - b)))
    return bool(np.all(np.abs(diff) <= tol * np.abs(b) + 1e-300))


def scaling_variants(e: Expect, seq_len: int | None):
    """Tables a mistaken implementation of e's scaling method would produce: (tag, what, thetas), the unscaled table
    first and then the method's own mistakes (:meth:`ropespec.spec.methods.ScalingMethod.mistakes`). Read by the diagnosis,
    the fingerprint and the perturbation grid alike (one list of the mistakes real ports made)."""
    th0 = reference.thetas(e.replace(rope_scaling=None))
    yield "unscaled", "the unscaled default table", th0
    yield from e.method.mistakes(e, seq_len, reference.thetas, th0)


def diagnose(f, e: Expect, *, reach: int | None = None) -> tuple[str, str] | None:
    """(word, evidence) for an implementation f (float64 in and out) that fails under e, or None.

    The probes call f up to e's max_position; an implementation that cannot be called there (a table that ends,
    raising beyond it) is probed again up to ``reach``, the largest position the failing case used, so that a
    failure inside the range it answers gets the word its evidence there gives."""
    try:
        return run_diagnosis(f, e)
    except Fault:
        return diagnose_within(f, e, reach)
    except (FloatingPointError, ValueError, OverflowError):
        return None


def run_diagnosis(f, e: Expect) -> tuple[str, str] | None:
    """:func:`diagnose` probed to e's max_position, a Fault of f there raised."""
    return (_diagnose_axes if e.multi_axis else _diagnose)(f, e)


def diagnose_within(f, e: Expect, reach: int | None) -> tuple[str, str] | None:
    """The diagnosis probed up to ``reach`` only, for an implementation that cannot be called at e's max_position."""
    if reach is None or reach + 1 >= e.max_position:
        return None
    try:
        return run_diagnosis(f, e.replace(max_position=max(reach + 1, 2)))
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return None


#: words of a structural fault: once one is found, every other failing property follows from it
STRUCTURAL = ("input-mutated", "non-finite", "nondeterministic", "not-a-rotation", "convention", "layout", "rotary-dim")


def root_cause(f, e: Expect) -> tuple[str, str] | None:
    """(word, evidence) of a structural fault of f under e (a word of :data:`STRUCTURAL`), or None: what
    makes every measurement read along the expected pairs meaningless, and so the root of other failures."""
    try:
        return _structure_of(probe.text_view(f, e), e)
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return None


def _structure_of(f, e: Expect) -> tuple[str, str] | None:
    d = e.head_dim
    top = e.max_position - 1
    probe_pos = np.array(sorted({0, 1, 5, min(top, 999), top}), dtype=np.int64)
    x = np.random.default_rng(0).standard_normal((len(probe_pos), d))
    call = f.call(x, probe_pos) if hasattr(f, "call") else None
    if call is not None and call.input_mutated:
        return "input-mutated", f"the call wrote into its argument {call.input_mutated}"
    y1 = call.out if call is not None else f(x, probe_pos)
    if not np.isfinite(y1).all():
        return "non-finite", nonfinite_evidence(f, x, probe_pos, y1)
    y2 = f(x, probe_pos)
    if not np.array_equal(y1, y2):
        k = np.unravel_index(int(np.argmax(np.abs(y1 - y2))), y1.shape)
        return "nondeterministic", f"two calls on the same input differ by {abs(y1[k] - y2[k]):.3g} at row {k[0]}, dim {k[1]}"
    mixed = _rows_mixed(f, e, x, probe_pos, y1)
    if mixed:
        return "layout", mixed
    zero = f(np.zeros((2, d)), np.array([1, top], dtype=np.int64))
    if np.any(zero != 0):
        j = int(np.argmax(np.abs(zero).max(axis=0)))
        return "not-a-rotation", f"f(0, p)[dim {j}] = {float(zero[np.argmax(np.abs(zero[:, j])), j]):.3g}, not 0: the output has a part that does not depend on x"
    pr = probe.convention(f, d)
    if pr.problem:
        return "not-a-rotation", pr.problem
    paired = {j for pair in pr.pairs for j in pair}
    alone = [j for j in range(d) if j not in paired and j not in pr.untouched]
    if alone:
        return "not-a-rotation", f"dim {alone[0]} changes without a partner dim: it is scaled, not rotated"
    return _structure(pr, e)


def _rows_mixed(f, e: Expect, x: np.ndarray, pos: np.ndarray, y: np.ndarray) -> str | None:
    """The evidence that the rows of one call are not rotated by their own positions but by another row's (the first
    row's, or positions running on from it, or restarting at 0), where one of these models fits every row; or None.
    Each row of the call is compared with the same row called alone, at its own position and at each candidate: a
    row-wise implementation gives the same either way, and a row that matches only another position tells where its
    position was read from (a packed layout that ignores cu_seqlens or the other sequences' offsets, positions[0]
    broadcast over the batch). A table that depends on the call's length (dynamic scaling) is not compared: its rows
    differ alone by design."""
    if table_variant(e, e.max_position) != table_variant(e, None) or len(pos) < 2:
        return None
    tol = 64 * tolerance.unit_roundoff(e.dtype) * np.abs(x).max(axis=1)

    def alone(i: int, p: int) -> np.ndarray:
        return f(x[i:i + 1], np.array([p], dtype=np.int64))[0]

    own = [np.abs(y[i] - alone(i, int(pos[i]))).max() <= tol[i] for i in range(len(pos))]
    if all(own):
        return None
    models = {"the first row's position": lambda i: int(pos[0]),
              "positions running on from the first row's (p_0 + i)": lambda i: int(pos[0]) + i,
              "positions restarting at 0 (i)": lambda i: i}
    for said, model in models.items():
        if all(model(i) < e.max_position and np.abs(y[i] - alone(i, model(i))).max() <= tol[i]
               for i in range(len(pos))):
            return (f"in one call of {len(pos)} rows at positions {pos.tolist()}, every row is rotated by {said}, and "
                    f"each row called alone is rotated by its own: the other rows' positions (other sequences' "
                    f"offsets, cu_seqlens, other batch rows) are ignored")
    return None  # rows that differ alone by no model (a table sized by the call's length) are another field's


def _measured(f, e: Expect, seq: int | None = None):
    """The frequencies read off f along e's pairs, the expected ones, the relative precision each is known to,
    and the call length the table is read at (for the types whose table depends on it: the original length unless
    ``seq`` is given)."""
    if seq is None and table_variant(e, e.max_position) != table_variant(e, None):
        seq = original_length(e)
    pairs = list(zip(e.pairs(), e.out_pairs()))
    fr = probe.frequencies(f, e.head_dim, pairs, max_position=e.max_position, seq_len=seq)
    th = reference.thetas(e, seq)
    tol = np.maximum(1e-6, 100 * np.nan_to_num(fr.precision, nan=1.0))  # per pair
    return fr, th, tol, seq


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


def frequency_fault(f, e: Expect) -> tuple[str, str] | None:
    """(word, evidence) when the frequencies read off f are not e's and a model says what they are: a table that
    wraps, the angle's sign or size, a constant position offset, another base or normalising dim, a mistaken
    scaling method, or every frequency off by one factor. None when they are e's (to the precision they are read
    to) or no model fits: rounding (angle-precision) is only said once this has found nothing, because a wrong
    frequency makes the error grow like p just as a rounded angle does."""
    try:
        if e.multi_axis:
            return axes_fault(f, e) or _frequency_model(probe.text_view(f, e), e, *_measured(probe.text_view(f, e), e))
        fr, th, tol, seq = _measured(f, e)
        return _frequency_model(f, e, fr, th, tol, seq)
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return None


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
        found.append(("direction", f"every pair turns by -p theta_i (pair 0 by {fr.thetas[0]:.6g} rad per position, "
                                   f"expected +{th[0]:.6g})"))
        fr = probe.Frequencies(**{**fr.__dict__, "thetas": -fr.thetas})  # phi = theta' (p + c): c keeps its sign
    c = float(np.median(fr.offset))
    if abs(c) >= 0.5 and np.all(np.abs(fr.offset - c) <= 1e-3 * max(1.0, abs(c))):
        found.append(("position-offset", f"at p = 0 every pair is already turned by {c:.6g} theta_i: positions are "
                                         f"shifted by {round(c)}"))
    rest = _frequencies_model(f, e, fr, th, tol, seq)
    if not found:
        return rest
    for then in found[1:] + [rest]:
        found[0] = _with(found[0], then)
    return found[0]


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
    if not e.method.scales:  # another base, normalising dim, index shift or factor of the one ladder
        return (_other_base(fr.thetas, e, tol, seq) if e.multi_axis else None) or _ladder(fr.thetas, e, tol) or \
            _formed_in(fr.thetas, th, tol, e)
    factor = _one_factor(ratio, tol)
    if factor is not None:
        s_, r = (e.rope_scaling or {}).get("factor"), e.rotary_dim
        ntk = (f" (s^(r/(r-2)) = {s_:g}^({r}/{r - 2}), the NTK-aware base's factor, taken as a divisor)"
               if s_ and r > 2 and _close(1 / factor, s_ ** (r / (r - 2)), tol.max()) else "")
        return "scaling", (f"every frequency is the {e.rope_type} table's divided by {1 / factor:.6g}{ntk} (to "
                           f"{_spread(ratio):.0e}): linear scaling by {1 / factor:.6g}, not {e.rope_type}")
    return _formed_in(fr.thetas, th, tol, e)


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


def nonfinite_evidence(f, x: np.ndarray, positions: np.ndarray, y: np.ndarray) -> str:
    """Where one call's output is non-finite, and whether that depends on the position or on the call: each such
    row is called again alone at its position, and a row finite alone is non-finite only beside the call's other
    rows (an overflow that grows with the call's length or largest position, as xPos's scale does)."""
    rows = np.flatnonzero(~np.isfinite(y).all(axis=1))
    at = sorted(set(positions[rows].tolist()))
    shown = ", ".join(str(p) for p in at[:6]) + (", ..." if len(at) > 6 else "")
    alone = []
    for i in rows[:4]:
        try:
            alone.append(bool(np.isfinite(f(x[i : i + 1], positions[i : i + 1])).all()))
        except Fault:
            alone.append(False)
    where = f"f(x, p) is non-finite at p = {shown} in a call of {len(positions)} rows up to p = {int(positions.max())}"
    if alone and all(alone):
        return (f"{where}, and finite when called with p alone: the non-finite values depend on the call (its "
                f"length or largest position), not on p")
    return where


def _diagnose(f, e: Expect) -> tuple[str, str] | None:
    found = _structure_of(f, e)
    if found is None:
        return _measured_fault(f, e)
    measured = _as_measured(f, e) if found[0] in ("convention", "rotary-dim") else None
    if measured is None:
        return found
    try:  # the frequencies read along the pairs it has: a second field where they are not e's either
        return _with(found, _measured_fault(f, measured))
    except (Fault, FloatingPointError, ValueError, OverflowError):
        return found


def _as_measured(f, e: Expect) -> Expect | None:
    """e with the convention and rotary dim f is measured to have (probe.convention), or None where they are no
    convention's: the expectation under which f's frequencies are read once its structure is known."""
    pr = probe.convention(f, e.head_dim)
    r = e.head_dim - len(pr.untouched)
    conv = pr.convention(e.head_dim, r) if r >= 2 and not pr.problem else None
    if conv is None:
        return None
    try:
        return e.replace(convention=conv, rotary_dim=r, partial_rotary_factor=None)
    except ValueError:
        return None


class Finding(tuple):
    """A diagnosis, (word, evidence), that knows the words of the other fields measured wrong (``also``), whose
    evidence its own is followed by."""

    also: tuple[str, ...] = ()

    def __new__(cls, word: str, evidence: str, also=()):
        found = super().__new__(cls, (word, evidence))
        found.also = tuple(also)
        return found


def also_of(found) -> tuple[str, ...]:
    """The other fields' words of a diagnosis (none for a plain (word, evidence))."""
    return getattr(found, "also", ())


def _with(first: tuple[str, str], then: tuple[str, str] | None) -> tuple[str, str]:
    """One word for a fault of several fields: the first found (the root), its evidence followed by each other
    field's word and evidence ("; and <word>: ..."), so that every field measured wrong is named."""
    if then is None or then[0] == first[0]:
        return first
    return Finding(first[0], f"{first[1]}; and {then[0]}: {then[1]}", (*also_of(first), then[0], *also_of(then)))


def _diagnose_axes(f, e: Expect) -> tuple[str, str] | None:
    """A multi-axis RoPE: the structure read at text tokens (every axis at p), then which axis each pair turns with
    and at which frequency, then what remains read as 1-D RoPE at text tokens (base, direction, precision)."""
    text = probe.text_view(f, e)
    found = _structure_of(text, e)
    if found is not None and found[0] == "convention":
        measured = _as_measured(text, e)
        if measured is not None:
            try:  # under the convention it has, the axes and frequencies read as for any other
                return _with(found, axes_fault(f, measured) or _measured_fault(text, measured))
            except (Fault, FloatingPointError, ValueError, OverflowError):
                return found
    return found or axes_fault(f, e) or _measured_fault(text, e)


def _measured_fault(f, e: Expect) -> tuple[str, str] | None:
    fr, th, tol, seq = _measured(f, e)
    found = _frequency_model(f, e, fr, th, tol, seq) or _length_fields(f, e)
    if found:  # a field that leaves the norms alone: the attention factor is measured too, and said if it is wrong
        return _with(found, _attention_factor_fault(f, e)) if found[0] in ("base", "direction", "position-offset") \
            else found
    d = e.head_dim
    top = e.max_position - 1
    pairs = list(zip(e.pairs(), e.out_pairs()))
    small = np.array([p for p in (1, 3, 5, 33, 257, 999) if p <= top], dtype=np.int64)  # where the
    explained = precision.explain_low_precision(f, e, small)  # candidates differ least among themselves
    if explained:
        return "angle-precision", explained
    norms = np.array([probe.angles(f, d, pairs, p, seq)[1] for p in (1, 5, min(top, 1001))])
    g = reference.attention_factor(e)
    allowed = tolerance.attention_factor_allowance(e, g)
    if norms.max() - norms.min() > 2 * allowed:
        i = np.unravel_index(int(np.argmax(np.abs(norms - np.median(norms)))), norms.shape)
        return "not-a-rotation", (f"a unit pair comes out with norms from {norms.min():.4g} to {norms.max():.4g} "
                                  f"(pair {i[1]}): a rotation keeps them equal")
    found = _attention_factor_fault(f, e)
    if found:
        return found
    if _close(fr.thetas, th, tol):
        return _growth(f, e)
    if e.method.scales:
        ratio = fr.thetas / th
        i = int(np.nanargmax(np.abs(ratio - 1)))
        if abs(ratio[0] - 1) <= tol[0]:
            return "scaling", f"pair {i} turns at {fr.thetas[i]:.6g}, the {e.rope_type} table says {th[i]:.6g}"
    return None


def _attention_factor_fault(f, e: Expect) -> tuple[str, str] | None:
    """("attention-factor", evidence) where a unit pair comes out scaled by another factor than e's, or None."""
    g = reference.attention_factor(e)
    measured = probe.measure(f, e, max_position=2).attention_factor  # as scaling.attention-factor reads it
    if abs(measured - g) > tolerance.attention_factor_allowance(e, g):
        return "attention-factor", (f"every pair comes out {measured:.6g} times its input, expected the attention "
                                    f"factor {g:.6g} ({measured / g:.4g} times it)")
    return None


# -- multi-axis RoPE: which axis each pair turns with ---------------------------------------------------------------
def _along(f, e: Expect, axis: int):
    """f with every row at 0 but on ``axis``, as 1-D RoPE of that axis's positions."""
    def one(x, positions):
        p = np.asarray(positions, dtype=np.int64)
        rows = np.zeros((len(p), e.n_axes), dtype=np.int64)
        rows[:, axis] = p
        return f(x, rows)
    return one


def axes_map(f, e: Expect) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per axis and pair (read along e's pairs): the frequency the pair turns at per unit of that axis (A, pairs),
    the angle at the zero vector divided by the owning axis's frequency (a position offset per pair), and how
    precisely each frequency was read (A, pairs)."""
    pairs = list(zip(e.pairs(), e.out_pairs()))
    rows = [probe.frequencies(_along(f, e, a), e.head_dim, pairs, max_position=e.max_position) for a in range(e.n_axes)]
    omega = np.array([fr.thetas for fr in rows])
    owner = np.argmax(np.abs(omega), axis=0)
    offset = np.array([rows[a].offset[j] for j, a in enumerate(owner)])
    return omega, offset, np.array([fr.precision for fr in rows])


def _runs(axes, names) -> str:
    """Pair axes as runs: 't 0-15, h 16-39, w 40-63' (at most 8 runs shown)."""
    out, start = [], 0
    for j in range(1, len(axes) + 1):
        if j == len(axes) or axes[j] != axes[start]:
            out.append(f"{names[axes[start]]} {start}" + (f"-{j - 1}" if j - 1 > start else ""))
            start = j
    return ", ".join(out[:8]) + (", ..." if len(out) > 8 else "")


def axes_fault(f, e: Expect) -> tuple[str, str] | None:
    """(word, evidence) when a multi-axis RoPE deals its pairs to other axes than e's, reads an axis at an offset, or
    runs another kind of ladder; None when each pair turns with its own axis at e's frequency (to the precision they
    are read to) or no model fits."""
    names = e.axes
    omega, offset, precision = axes_map(f, e)
    offset = offset - e.pair_offsets()  # measured against the axes' own offsets (axes_offset)
    A, k = omega.shape
    size = np.abs(omega)
    top = size.max(axis=0)
    got = tuple(int(a) for a in np.argmax(size, axis=0))
    want = e.pair_axes()
    th = reference.thetas(e)
    moving = top > 0
    # a pair turning with several axes at once is no axial RoPE (a mixed scheme): no word of the vocabulary names it
    if A > 1 and np.any(np.sort(size, axis=0)[-2] > 1e-6 * top):
        return None
    if got != want and moving.all():
        return _assignment(e, got, want, omega, names)
    # the offsets and the frequencies are measured apart: an offset found wrong is the word, and a frequency found
    # wrong too is said after it
    shifted = None
    c_all = offset[moving]
    c0 = float(np.median(c_all)) if c_all.size else 0.0
    if A > 1 and abs(c0) >= 0.5 and np.all(np.abs(c_all - c0) <= 1e-3 * max(1.0, abs(c0))):
        said = f" beyond the axes' offsets {list(e.axes_offset)}" if e.axes_offset else ""
        shifted = "position-offset", (f"at the zero vector every axis's pairs are already turned by {c0:.6g} times "
                                      f"their frequency{said}: positions on every axis are shifted by {round(c0)}")
    for a in range(A):
        mine = np.array([j for j in range(k) if want[j] == a])
        if shifted or not mine.size:
            continue
        c = float(np.median(offset[mine]))
        same = np.all(np.abs(offset[mine] - c) <= 1e-3 * max(1.0, abs(c)))
        if abs(c) >= 0.5 and same and not np.all(np.abs(c_all - c) <= 1e-3 * max(1.0, abs(c))):
            shifted = "axis-offset", (f"at the zero vector axis {names[a]}'s pairs are already turned by {c:.6g} times "
                                      f"their frequency: positions on {names[a]} are shifted by {round(c)}, the other "
                                      f"axes' are not")
    found = _axes_frequencies(e, omega, precision, got, th)
    return _with(shifted, found) if shifted else found


def _axes_frequencies(e: Expect, omega, precision, got, th) -> tuple[str, str] | None:
    """Each pair's frequency on the axis it turns with against e's ladder: another base or another kind of ladder."""
    freq = np.array([omega[a, j] for j, a in enumerate(got)])
    tol = np.maximum(1e-6, 100 * np.nan_to_num(np.array([precision[a, j] for j, a in enumerate(got)]), nan=1.0))
    if _close(freq, th, tol):
        return None
    other = _other_base(freq, e, tol, None) if np.all(freq > 0) else None
    if other:
        return other
    for word, other, what in _other_ladders(e):
        if _close(freq, reference.thetas(other), tol):
            return word, (f"the frequencies match {what} (pair {int(np.argmax(np.abs(th - freq)))} turns at "
                          f"{freq[int(np.argmax(np.abs(th - freq)))]:.6g} per unit, {e.axes_kind()} expects "
                          f"{th[int(np.argmax(np.abs(th - freq)))]:.6g})")
    return None


def _other_ladders(e: Expect):
    """The other kind of ladder over e's axes: (word, an expectation of it, how it reads)."""
    sizes = [e.pair_axes().count(a) for a in range(e.n_axes)]
    plain = {"mrope_section": None, "mrope_interleaved": False, "axes_dims_rope": None, "axes_parity": False}
    if e.shared_ladder():
        if e.axes_kind() == "chunked":
            yield "ladder-per-axis", e.replace(**{**plain, "axes_dims_rope": [2 * v for v in sizes]}), (
                f"a ladder per axis, theta^(-2k/d_a) with d_a = {[2 * v for v in sizes]}, where one ladder "
                f"theta^(-2j/{e.rotary_dim}) runs over the pairs")
    else:
        if e.axes_kind() == "per-axis":
            yield "ladder-shared", e.replace(**{**plain, "mrope_section": sizes}), (
                f"one ladder theta^(-2j/{e.rotary_dim}) over every pair, where each axis has its own "
                f"theta^(-2k/d_a), d_a = {list(e.axes_dims_rope)}")
        else:
            yield "ladder-shared", e.replace(**{**plain, "mrope_section": sizes}), (
                f"one ladder theta^(-2j/{e.rotary_dim}) in the pairs' order, where Pixtral's split gives axis 0 the "
                f"even and axis 1 the odd frequency indices")


def _assignment(e: Expect, got, want, omega, names) -> tuple[str, str]:
    """The word for pairs dealt to other axes than e's, and the evidence."""
    A = e.n_axes
    j = next(i for i in range(len(want)) if got[i] != want[i])
    seen = (f"pair {j} turns with {names[got[j]]} ({abs(omega[got[j], j]):.4g} rad per unit of {names[got[j]]}, "
            f"{abs(omega[want[j], j]):.3g} per unit of {names[want[j]]}), expected {names[want[j]]}")
    idle = [a for a in range(A) if a not in got and a in want]
    if idle:
        a = idle[0]
        readers = sorted({names[got[i]] for i in range(len(want)) if want[i] == a})
        return "axis-ignored", (f"no pair turns with axis {names[a]}: its {want.count(a)} pairs turn with "
                                f"{' and '.join(readers)} ({seen}): {names[a]}'s positions are ignored or another "
                                f"axis's are read in their place")
    for a in range(A):
        for b in range(a + 1, A):
            swap = {a: b, b: a}
            if tuple(swap.get(w, w) for w in want) == got:
                return "axes-swapped", (f"the pairs of {names[a]} turn with {names[b]} and those of {names[b]} with "
                                        f"{names[a]} ({seen}): the two axes' positions are read in each other's place")
    if e.mrope_section is not None:
        chunked = e.replace(mrope_interleaved=False).pair_axes()
        interleaved = interleaved_axes(e.mrope_section, e.n_pairs)
        if e.mrope_interleaved and got == chunked:
            return "axes-chunked", (f"the pairs turn with the axes in chunks ({_runs(got, names)}) of the sections "
                                    f"{list(e.mrope_section)}, where mrope_interleaved deals them in turn "
                                    f"(pair j on axis j mod {A} below {A} x its section) ({seen})")
        if not e.mrope_interleaved and interleaved is not None and got == interleaved:
            return "axes-interleaved", (f"the pairs turn with the axes in turn (pair j on axis j mod {A}), where the "
                                        f"sections {list(e.mrope_section)} are chunks ({seen})")
    counts = [got.count(a) for a in range(A)]
    return "axes-sections", (f"the pairs turn with the axes as {_runs(got, names)} ({counts} pairs per axis), expected "
                             f"{_runs(want, names)} ({seen})")


def interleaved_axes(sections, n_pairs: int) -> tuple[int, ...]:
    """Qwen3-VL's rule applied to any sections, as its code does (pair j on axis a = j mod A when a > 0 and
    j < A sections[a], else on axis 0), even where they are no valid interleaved sections."""
    A = len(sections)
    return tuple(j % A if j % A and j < A * sections[j % A] else 0 for j in range(n_pairs))


_SAYS = {"half": "pairs (i, i + r/2) rotated in place", "interleaved": "pairs (2i, 2i + 1) rotated in place",
         "rope_interleave": "interleaved pairs (2i, 2i + 1) written to (i, i + r/2)"}


def _structure(pr: probe.Pairing, e: Expect) -> tuple[str, str] | None:
    """``rotary-dim``, ``convention`` (the wrong dims turn together) or ``layout`` (the right pairs,
    written to the wrong dims) from the measured convention; None when it is e's."""
    still = set(e.method.still_pairs(e))  # pairs of frequency 0 pass through (proportional RoPE's)
    turning = [(p, o) for i, (p, o) in enumerate(zip(e.pairs(), e.out_pairs())) if i not in still]
    want = sorted(p for p, _ in turning)
    r = 2 * len(turning)  # the dims that turn
    if sorted(pr.pairs) == want:
        wrong = [(p, pr.out[p], o) for p, o in turning if pr.out[p] != o]
        if not wrong:
            return None
        (a, b), got, o = wrong[0]
        found = pr.convention(e.head_dim, e.rotary_dim)
        how = f"the {found} layout ({_SAYS[found]})" if found else "another layout"
        return "layout", (f"the right dims turn together, but pair ({a}, {b}) is written to dims {got}, expected {o}: "
                          f"{how}, expected {e.convention} ({_SAYS[e.convention]}); {len(wrong)} of {len(want)} pairs moved")
    touched = e.head_dim - len(pr.untouched)
    if touched != r:
        return "rotary-dim", _rotary_dim_evidence(e.head_dim, pr.untouched, e.rotary_dim, len(still))
    got = dict(pr.pairs)
    a = next(a for a, b in want if got.get(a) != b)
    found = pr.convention(e.head_dim, e.rotary_dim)
    if found:
        return "convention", (f"the {found} convention ({_SAYS[found]}), expected {e.convention}: dim {a} turns with dim "
                              f"{got.get(a)}, not with dim {dict(want)[a]}")
    return "convention", f"dim {a} turns with dim {got.get(a)}, expected dim {dict(want)[a]} ({e.convention} convention)"


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
        return "base", f"the frequencies fit base {math.exp(k * r):.6g} (to {resid:.0e}), expected {e.rope_theta:g}"
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


def _growth(f, e: Expect) -> tuple[str, str] | None:
    """Frequencies are right: is the error a rounding's (angles computed with too little precision)?"""
    sw = precision.measure(f, e, precision.sweep_positions(e.max_position, per_octave=1), vectors=1)
    return precision_evidence(sw, e)


def precision_evidence(sw, e: Expect) -> tuple[str, str] | None:
    """("angle-precision", evidence) from a sweep of an implementation whose frequencies are e's, where the
    declared class fails: the error grows like p from within the bound, or a coarser class (angles and inverse
    frequencies formed in a lower dtype) holds at every swept position where it promises something. None when
    the sweep shows neither."""
    declared = precision.class_of(e)
    fail = sw.first_failure(declared)
    if fail is None:
        return None
    k = sw.growth()
    if k is not None and k >= 0.5 and sw.ratio[declared][0] <= 1.0:
        return "angle-precision", (f"the frequencies are right but the error grows like p^{k:.2f} and leaves the "
                                   f"bound at p = {fail}")
    names = list(precision.CLASSES)
    # the classes of mainstream code only: a bfloat16 or float16 class's bound is wide enough to take in a wrong
    # frequency, and those roundings are recognised by their own signature (explain_low_precision)
    coarser = [c for c in names[names.index(declared) + 1:] if c in ("float64", "float32")] if declared in names else []
    for c in coarser:
        if c in sw.ratio and sw.first_failure(c) is None and sw.informative(c).any():
            until = sw.promises_until(c)
            reach = f"to p = {sw.positions[-1]}" if until is None else f"to p = {until}, where its bound saturates"
            return "angle-precision", (f"the frequencies are right and the error stays within the {c} class's bound "
                                       f"at every swept position ({reach}): angles or inverse frequencies formed in {c}")
    return None


def _wrap(f, e: Expect) -> tuple[str, str] | None:
    """Frequencies are right up to some length; do large positions wrap around a table? f(x, p) is the rotation
    at p mod T where it is within the expectation's own bound at p mod T and outside it at p."""
    top = e.max_position - 1
    x = np.random.default_rng(0).standard_normal((1, e.head_dim))

    def near(y, p):
        return bool(np.all(np.abs(y - reference.apply(e, x, np.array([p]))) <= output_bound(e, x, np.array([p]))))

    for p in sorted({top, top // 2 * 2 + 1, (3 * top) // 4 | 1}):
        y = f(x, np.array([p]))
        if near(y, p):
            continue
        for k in range(4, 40):
            T = 1 << k
            if T >= p:
                break
            if near(y, p % T):
                return "position-offset", f"positions wrap modulo {T}: f(x, {p}) equals the exact rotation at {p % T}"
    return None


def _rotary_dim_evidence(d: int, untouched: list[int], r: int, still: int = 0) -> str:
    """'6 of 8 dims rotate and 2 pass through (dims 6, 7), expected rotary_dim 4: ...' as a sentence (``still``: the
    pairs of frequency 0 among the rotary dims, which pass through too)."""
    touched = d - len(untouched)
    if untouched:
        shown = ", ".join(str(j) for j in untouched[:4]) + (", ..." if len(untouched) > 4 else "")
        what = f"{touched} of {d} dims rotate and {len(untouched)} pass through (dims {shown})"
    else:
        what = f"all {d} dims rotate and none passes through"
    if still:
        return (f"{what}, expected {r - 2 * still} rotating: {still} of the {r // 2} rotary pairs have frequency 0 "
                f"(proportional RoPE's pairs past partial_rotary_factor) and pass through")
    want = (f"{r} rotating and dims {r}..{d - 1} passing through" if r < d else "every dim rotating")
    return f"{what}, expected rotary_dim {r} ({want})"
