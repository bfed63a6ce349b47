"""Spec section "alibi": ALiBi's bias on the attention scores, alibi(n_heads, q_positions, k_positions), or its
slopes alone, checked against the exact slopes and bias of ropespec.reference.biases, up to the one constant per row that
softmax ignores (BLOOM's form relies on it)."""

from __future__ import annotations

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure, Unsupported
from ropespec.implementations.families.alibi import SLOPES_ONLY
from ropespec.properties.cases import listed
from ropespec.properties.framework import rope_property
from ropespec.properties.numerics import COARSE, alibi_precision_keys, coarse_roundings
from ropespec.reference.biases import alibi_bias, alibi_slopes
from ropespec.spec import definitions, tolerance
from ropespec.spec.dtypes import MANTISSA_BITS, round_to
from ropespec.spec.expectation import Expect

#: head counts drawn: powers of two and not (BLOOM-560m's 16, BLOOM-7b1's 32, BLOOM-176b's 112, MPT's 32 and 40)
HEADS = (1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 112)
#: the pinned head counts: a power of two, and one that is not (its slopes interleave two ladders)
PINNED_HEADS = (8, 12)
#: queries and keys drawn for the softmax and shift properties stay below this (the precision property goes further)
NEAR_POSITIONS = 4096


def _expects(impl) -> list[Expect]:
    """The implementation's expectation, or (a factory) both forms of the rule in the class it promises."""
    if impl.expect is not None:
        return [impl.expect]
    base = Expect(dtype=impl.dtype, max_position=impl.max_position, **impl.promise)
    return [base, base.replace(bias_symmetric=True)]


def _allowed(e: Expect, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """(n_q, n_k): the keys each query's softmax runs over (j <= i causal; every key symmetric)."""
    return np.ones((len(q), len(k)), bool) if e.params("alibi").bias_symmetric else k[None, :] <= q[:, None]


def _rows_within(d: np.ndarray, tau: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whether some constant c per (head, row) has |d - c| <= tau on every allowed key of the row: the smallest
    achievable max |d - c| / tau is max over key pairs of |d_a - d_b| / (tau_a + tau_b) (the two bounds meet there).
    Returns (ok (h, n_q), that ratio (h, n_q), the pair of keys attaining it (h, n_q, 2))."""
    with np.errstate(invalid="ignore"):  # a non-finite difference (a value past a dtype's range) is no fit: inf below
        gap = np.abs(d[..., :, None] - d[..., None, :]) / (tau[..., :, None] + tau[..., None, :])
    both = allowed[:, :, None] & allowed[:, None, :]
    gap = np.where(both[None], np.nan_to_num(gap, nan=np.inf), 0.0)
    flat = gap.reshape(*gap.shape[:2], -1)
    at = np.argmax(flat, axis=2)
    ratio = np.take_along_axis(flat, at[..., None], axis=2)[..., 0]
    return ratio <= 1, ratio, np.stack(np.unravel_index(at, gap.shape[2:]), axis=-1)


def _finite(got: np.ndarray, allowed: np.ndarray, call: str) -> None:
    """A non-finite bias on a key the softmax sees is a finding of its own."""
    bad = ~np.isfinite(got) & allowed[None]
    if bad.any():
        hh, row, j = (int(v) for v in np.argwhere(bad)[0])
        raise Failure(f"{call}[head {hh}, row {row}, key {j}] = {got[hh, row, j]}: non-finite; {int(bad.sum())} of "
                      f"{bad.size} elements", "non-finite", float("inf"))


def _bias_of(bind, e, h, q, k):
    """The bias of one call; a call the TARGET cannot make (a slopes function: skip_if says so first) is a case not
    checked, never a failure."""
    try:
        return bind(e).bias(h, q, k)
    except Unsupported as err:
        raise NotImplementedError(str(err)) from None


def _skip_slopes_only(impl) -> str | None:
    """Why the bias properties are not about the implementation: it computes the slopes alone."""
    try:
        return SLOPES_ONLY if impl.bind(_expects(impl)[0]).kind() == "slopes" else None
    except Exception:  # the properties report what binding does, with its diagnosis
        return None


def _explain(got: np.ndarray, e: Expect, h: int, q: np.ndarray, k: np.ndarray, tau: np.ndarray) -> tuple[str, str] | None:
    """The fault a failing bias fits, from evidence: its sign, a causal bias where a symmetric one was meant, the
    slopes of another rule or order, or rounding at the scale of the absolute positions."""
    allowed = _allowed(e, q, k)

    def fits(model: np.ndarray) -> bool:
        return bool(np.all(_rows_within(got - model, tau, allowed)[0]))

    ref = alibi_bias(h, q, k, e.params("alibi").alibi_bias_max, e.params("alibi").bias_symmetric)
    if fits(-ref):
        return "bias-sign", "the bias is +m_h (i - j): it grows with the distance instead of falling"
    if e.params("alibi").bias_symmetric and fits(alibi_bias(h, q, k, e.params("alibi").alibi_bias_max, False)):
        return "one-sided", "keys after the query get +m_h (j - i): the causal -m_h (i - j) where -m_h |i - j| was meant"
    slopes = alibi_slopes(h, e.params("alibi").alibi_bias_max)
    i, j = q[:, None].astype(np.float64), k[None, :].astype(np.float64)
    unit = definitions.alibi_bias(1.0, i, j, e.params("alibi").bias_symmetric)
    if h > 1 and fits(slopes[::-1, None, None] * unit[None]):
        return "slope-order", f"the slopes run the other way across heads (head 0 has {slopes[-1]:.6g}, expected {slopes[0]:.6g})"
    geometric = 2.0 ** (-e.params("alibi").alibi_bias_max * (np.arange(h) + 1) / h)
    if not np.allclose(geometric, slopes) and fits(geometric[:, None, None] * unit[None]):
        return "slopes", (f"the slopes are 2^(-{e.params('alibi').alibi_bias_max:g} (h + 1) / {h}), the rule of a power of two, but {h} "
                          f"heads is none (the rule takes the slopes of {1 << (h.bit_length() - 1)} heads, then every "
                          f"other of {2 << (h.bit_length() - 1)}'s)")
    fitted = _fit_slopes(got, unit, allowed)
    coarse = _rounded_like(fitted, slopes)
    if coarse is not None and fits(round_to(slopes, coarse[1])[:, None, None] * unit[None]):
        return "bias-precision", (f"the slopes are the rule's rounded to {coarse[0]} ({MANTISSA_BITS[coarse[1]]} "
                                  f"significant bits)")
    if fits(fitted[:, None, None] * unit[None]) and not np.allclose(fitted, slopes, rtol=0, atol=0):
        worst = int(np.argmax(np.abs(fitted / slopes - 1)))
        return "slopes", (f"the bias is another slope's times the distance: head {worst}'s slope is "
                          f"{fitted[worst]:.9g}, {fitted[worst] / slopes[worst]:.9g} times the rule's {slopes[worst]:.9g}")
    coarse = _coarse_form(got, e, h, q, k, tau)
    if coarse is not None:
        return "bias-precision", f"the bias is {coarse}, coarser than the class promises"
    return None


def _rounded_like(got: np.ndarray, slopes: np.ndarray) -> tuple[str, str] | None:
    """The coarse dtypes whose rounding of the rule's slopes ``got`` is (ropespec.properties.numerics.coarse_roundings), as
    (their names in words, the coarsest), or None."""
    found = coarse_roundings(got, slopes)
    if not found:
        return None
    return " or ".join(found) + ("" if len(found) == 1 else ", the same values here"), found[0]


def _coarse_form(got: np.ndarray, e: Expect, h: int, q: np.ndarray, k: np.ndarray, tau: np.ndarray) -> str | None:
    """Whether ``got`` is a bias formed in a coarse precision, in words: the distance form -m (i - j), BLOOM's m j from
    the sequence's start or MPT's m (j - L + 1) from its end, each element rounded to bfloat16 or float16 (with the
    slopes, and the positions, rounded there too or not), up to a row constant; None if none of them fits."""
    slopes = alibi_slopes(h, e.params("alibi").alibi_bias_max)
    allowed = _allowed(e, q, k)
    last = int(max(np.max(q), np.max(k)))
    i, j = q[None, :, None].astype(np.float64), k[None, None, :].astype(np.float64)
    forms = (("the distance form -m (i - j)", lambda m, ii, jj: definitions.alibi_bias(m, ii, jj, e.params("alibi").bias_symmetric)),
             ("BLOOM's m j", lambda m, ii, jj: m * jj + 0 * ii),
             ("MPT's m (j - L + 1)", lambda m, ii, jj: m * (jj - last) + 0 * ii))
    for words, form in forms:
        found = [f"{name} ({MANTISSA_BITS[name]} significant bits)" for name in COARSE
                 if any(np.all(_rows_within(got - round_to(form(m[:, None, None], i, jj), name), tau, allowed)[0])
                        for m in (slopes, round_to(slopes, name)) for jj in (j, round_to(j, name)))]
        if found:  # where two precisions give the same values here, the evidence cannot tell them apart: both named
            return f"{words} rounded to {' or '.join(found)}"
    return None


def _fit_slopes(got: np.ndarray, unit: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Each head's slope m' that best makes ``got`` m' times ``unit`` plus a constant per row (least squares over the
    allowed keys, each row's mean removed)."""
    w = allowed.astype(np.float64)
    count = np.maximum(w.sum(axis=1, keepdims=True), 1)
    du = (unit - (unit * w).sum(axis=1, keepdims=True) / count) * w
    dg = (got - (got * w[None]).sum(axis=2, keepdims=True) / count[None]) * w[None]
    den = float(np.sum(du * du))
    return np.sum(dg * du[None], axis=(1, 2)) / den if den else np.zeros(len(got))


def _named(err: Failure, got, e, h, q, k, tau) -> Failure:
    found = _explain(got, e, h, q, k, tau)
    if found is None:
        return err.named(err.diagnosis or "unknown", err.evidence)
    return err.named(found[0], found[1])


def _check_rows(what: str, got: np.ndarray, e: Expect, h: int, q: np.ndarray, k: np.ndarray, call: str) -> float:
    """Each row of ``got`` within bias_bound of the reference up to a row constant; raises a named Failure."""
    ref = alibi_bias(h, q, k, e.params("alibi").alibi_bias_max, e.params("alibi").bias_symmetric)
    tau = tolerance.bias_bound(e, alibi_slopes(h, e.params("alibi").alibi_bias_max), q, k)
    _finite(got, _allowed(e, q, k), call)
    ok, ratio, keys = _rows_within(got - ref, tau, _allowed(e, q, k))
    if ok.all():
        return float(ratio.max(initial=0.0))
    hh, row = (int(v) for v in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    a, b = (int(v) for v in keys[hh, row])
    err = Failure(f"{what}[head {hh}, query {int(q[row])}] at keys {int(k[a])} and {int(k[b])} = {got[hh, row, a]:.9g} "
                  f"and {got[hh, row, b]:.9g}, the reference's {ref[hh, row, a]:.9g} and {ref[hh, row, b]:.9g}: no "
                  f"constant per row brings both within their bounds {tau[hh, row, a]:.3g} and {tau[hh, row, b]:.3g} "
                  f"({ratio[hh, row]:.3g} times them, {tolerance.bias_class_name(e)}); {int((~ok).sum())} of {ok.size} "
                  f"rows [{call}]", None, float(ratio[hh, row]))
    raise _named(err, got, e, h, q, k, tau)


# -- slopes --------------------------------------------------------------------------------------------
def _head_cases(impl):
    """An expectation and a head count: what the slopes and the precision ladder are drawn over."""
    @st.composite
    def build(draw):
        return {"expect": draw(st.sampled_from(_expects(impl)), label="expect"),
                "n_heads": draw(st.sampled_from(HEADS), label="n_heads")}

    return build()


def _head_pinned(impl):
    return [{"expect": e, "n_heads": h} for e in _expects(impl)[:1] for h in PINNED_HEADS]


@rope_property("alibi.slopes",
               rule="slope_bound per slope (twice it where the slopes are read off two elements of a bias)",
               cases=_head_cases, pinned=_head_pinned)
def test_alibi_slopes(bind, case):
    e, h = case["expect"], case["n_heads"]
    f = bind(e)
    got, ref = f.slopes(h), alibi_slopes(h, e.params("alibi").alibi_bias_max)
    bound = tolerance.slope_bound(e, ref) * (1 if f.kind() == "slopes" else 2)
    err = np.abs(got - ref)
    if np.all(err <= bound):
        return float(np.max(err / bound))
    bad = int(np.argmax(np.where(np.isfinite(err), err / bound, np.inf)))
    message = (f"slope of head {bad} of {h} = {got[bad]:.9g}, expected {ref[bad]:.9g} (|error| {err[bad]:.3g} > "
               f"bound {bound[bad]:.3g}); {int(np.sum(err > bound))} of {h} heads [{f.kind()} of n_heads={h}]")
    geometric = 2.0 ** (-e.params("alibi").alibi_bias_max * (np.arange(h) + 1) / h)
    coarse = _rounded_like(got, ref)
    if coarse is not None:
        word, why = "bias-precision", (f"the rule's slopes rounded to {coarse[0]} ({MANTISSA_BITS[coarse[1]]} "
                                       f"significant bits)")
    elif np.all(got < 0) and np.all(np.abs(-got - ref) <= bound):
        word, why = "bias-sign", "the bias grows with the distance (its slopes read off it are negative)"
    elif h > 1 and np.all(np.abs(got - ref[::-1]) <= bound):
        word, why = "slope-order", "the rule's slopes in reverse order across heads"
    elif np.all(np.abs(got - geometric) <= bound * 2):
        word, why = "slopes", (f"2^(-{e.params('alibi').alibi_bias_max:g} (h + 1) / {h}) for every head: the rule of a power of two, "
                               f"and {h} is none")
    else:
        ratio = got[got > 0][:1] / ref[got > 0][:1] if np.any(got > 0) else np.array([np.nan])
        word, why = "slopes", f"another rule (head 0's slope is {float(ratio[0]):.6g} times the expected)"
    raise Failure(message, word, float(err[bad] / bound[bad]), evidence=why)


# -- the bias, up to a row constant ---------------------------------------------------------------------
def _row_cases(impl, shift: bool = False):
    @st.composite
    def build(draw):
        e = draw(st.sampled_from(_expects(impl)), label="expect")
        top = min(e.max_position, NEAR_POSITIONS) - 1 - shift  # a shift of at least 1 keeps below max_position
        if top < 0:
            reject()
        q = draw(st.lists(st.integers(0, top), min_size=1, max_size=4, unique=True), label="q_positions")
        k = draw(st.lists(st.integers(0, top), min_size=1, max_size=6), label="k_positions")
        k = sorted(set(k) | set(q) | {max(p - 1, 0) for p in q})  # each row sees its own key and the one before
        case = {"expect": e, "n_heads": draw(st.sampled_from(HEADS), label="n_heads"),
                "q": np.array(sorted(q), dtype=np.int64), "k": np.array(k, dtype=np.int64)}
        if shift:
            case["shift"] = draw(st.integers(1, e.max_position - 1 - max(max(q), max(k))), label="shift")
        return case

    return build()


def _row_pinned(impl, shift: bool = False):
    out = []
    for e in _expects(impl):
        top = min(e.max_position, NEAR_POSITIONS)
        c = max(1, e.max_position - top) if shift else 0
        below = e.max_position - c  # every position, and every shifted one, below max_position
        if below < 1:
            continue
        q = np.array(sorted({p for p in (0, 1, 5, below - 1) if 0 <= p < below}), dtype=np.int64)
        k = np.array(sorted({p for p in (0, 1, 2, 4, 5, below - 2, below - 1) if 0 <= p < below}), dtype=np.int64)
        for h in PINNED_HEADS:
            case = {"expect": e, "n_heads": h, "q": q, "k": k}
            if shift:
                case["shift"] = c
            out.append(case)
        if not shift:  # a call across the tile sizes of keys (128, 256) with more heads than one tile of 8
            out.append({"expect": e, "n_heads": max(PINNED_HEADS), "q": np.array([p for p in (0, 128, 256) if p < below]),
                        "k": np.arange(min(257, below), dtype=np.int64)})
    return out


@rope_property("alibi.softmax-rows",
               rule="bias_bound per element, up to one constant per row over the row's keys (j <= i causal, all "
                    "symmetric): some c_i has |b - b* - c_i| <= bound everywhere on the row",
               cases=_row_cases, pinned=_row_pinned, skip_if=_skip_slopes_only)
def test_alibi_softmax_rows(bind, case):
    e, h, q, k = case["expect"], case["n_heads"], case["q"], case["k"]
    got = _bias_of(bind, e, h, q, k)
    return _check_rows("alibi", got, e, h, q, k, f"alibi({h}, q_positions={listed(q)}, k_positions={listed(k)})")


def _skip_no_shift(impl) -> str | None:
    if impl.max_position < 2:
        return f"max_position {impl.max_position}: no two positions to shift between"
    return _skip_slopes_only(impl)


@rope_property("alibi.relative-position",
               rule="bias_bound at both places summed, up to one constant per row",
               cases=lambda impl: _row_cases(impl, shift=True), pinned=lambda impl: _row_pinned(impl, shift=True),
               skip_if=_skip_no_shift)
def test_alibi_relative_position(bind, case):
    e, h, q, k, c = case["expect"], case["n_heads"], case["q"], case["k"], case["shift"]
    near, far = _bias_of(bind, e, h, q, k), _bias_of(bind, e, h, q + c, k + c)
    slopes = alibi_slopes(h, e.params("alibi").alibi_bias_max)
    tau = tolerance.bias_bound(e, slopes, q, k) + tolerance.bias_bound(e, slopes, q + c, k + c)
    allowed = _allowed(e, q, k)
    _finite(far, allowed, f"alibi({h}, q_positions + {c}, k_positions + {c})")
    _finite(near, allowed, f"alibi({h}, q_positions, k_positions)")
    ok, ratio, keys = _rows_within(far - near, tau, allowed)
    if ok.all():
        return float(ratio.max(initial=0.0))
    hh, row = (int(v) for v in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    a, b = (int(v) for v in keys[hh, row])
    moved = far - near
    coarse = _coarse_form(far, e, h, q + c, k + c, tolerance.bias_bound(e, slopes, q + c, k + c))
    what = (f"alibi(q + {c}, k + {c}) - alibi(q, k) [head {hh}, query {int(q[row])}] is {moved[hh, row, a]:.9g} at key "
            f"{int(k[a])} and {moved[hh, row, b]:.9g} at key {int(k[b])}: not one constant along the row "
            f"({ratio[hh, row]:.3g} times the bounds)")
    if coarse is not None:
        raise Failure(what, "bias-precision", float(ratio[hh, row]),
                      evidence=f"the shifted call's bias is {coarse}, coarser than {tolerance.bias_class_name(e)}")
    raise Failure(what, "absolute-position", float(ratio[hh, row]),
                  call=f"alibi({h}, q_positions={q.tolist()}, k_positions={k.tolist()}), shifted by {c}",
                  evidence="the bias depends on where the query and key are, not only on i - j")


# -- a batch of sequences, each head its own (the bhqk layout) ------------------------------------------------
def _not_batched(impl) -> str | None:
    return None if impl.shape.laid_out.bias else "an invariant of ALiBi's batched call (--layout bhqk)"


def _batch(rows: list[tuple[list[int], list[int]]], top: int) -> tuple[np.ndarray, np.ndarray]:
    """(q (batch, n_q), k (batch, n_k)) from each row's queries and keys, every row's keys made one length with the
    first positions up to ``top`` it lacks (keys before a query, as a left-padded row's real tokens, or after it,
    which a causal row does not see)."""
    n_k = max(len(k) for _, k in rows)
    if n_k > top + 1:
        reject()  # fewer positions below max_position than keys to give each row
    ks = []
    for _, k in rows:
        extra = (p for p in range(top + 1) if p not in set(k))
        ks.append(sorted(set(k) | {next(extra) for _ in range(n_k - len(k))}))
    return np.array([q for q, _ in rows], dtype=np.int64), np.array(ks, dtype=np.int64)


def _batch_cases(impl):
    @st.composite
    def build(draw):
        e = draw(st.sampled_from(_expects(impl)), label="expect")
        top = min(e.max_position, NEAR_POSITIONS) - 1
        b, n_q = draw(st.integers(2, 3), label="batch"), draw(st.integers(1, min(3, top + 1)), label="n_q")
        rows = []
        for r in range(b):  # each row its own positions: a left-padded row starts at 0, a later one anywhere
            q = sorted(draw(st.lists(st.integers(0, top), min_size=n_q, max_size=n_q, unique=True), label=f"q {r}"))
            k = draw(st.lists(st.integers(0, top), max_size=4), label=f"k {r}")
            rows.append((q, sorted(set(k) | set(q) | {max(p - 1, 0) for p in q})))
        q, k = _batch(rows, top)
        return {"expect": e, "n_heads": draw(st.sampled_from(HEADS), label="n_heads"), "q": q, "k": k}

    return build()


def _batch_pinned(impl):
    """Two rows, the second left-padded by three (its real tokens at 0..3), a third at a large offset, under each
    pinned head count."""
    out = []
    for e in _expects(impl)[:1]:
        far = min(e.max_position, NEAR_POSITIONS) - 1
        if far < 7:  # too few positions for these rows: the drawn cases stay below max_position
            continue
        q, k = _batch([([5, 6], [0, 1, 2, 3, 4, 5, 6]), ([2, 3], [0, 1, 2, 3]), ([far - 1, far], [far - 5, far - 1, far])],
                      far)
        out += [{"expect": e, "n_heads": h, "q": q, "k": k} for h in PINNED_HEADS]
    return out


def _batch_fault(got: np.ndarray, e: Expect, h: int, q: np.ndarray, k: np.ndarray) -> tuple[str, str] | None:
    """Whether a batched bias is the right values in the wrong places: (heads, batch) read as (batch, heads), or
    every row given row 0's positions."""
    def holds(bias: np.ndarray, rows_q: np.ndarray, rows_k: np.ndarray) -> bool:
        for r in range(len(q)):
            tau = tolerance.bias_bound(e, alibi_slopes(h, e.params("alibi").alibi_bias_max), rows_q[r], rows_k[r])
            ref = alibi_bias(h, rows_q[r], rows_k[r], e.params("alibi").alibi_bias_max, e.params("alibi").bias_symmetric)
            if not np.all(_rows_within(bias[r] - ref, tau, _allowed(e, q[r], k[r]))[0]):
                return False
        return True

    b = len(q)
    if h > 1 and holds(got.reshape(h, b, *got.shape[2:]).transpose(1, 0, 2, 3), q, k):
        return "layout", (f"the bias is laid out (heads, batch) and read as (batch, heads): a reshape of {h} heads x "
                          f"{b} rows in the wrong order hands each (row, head) another's bias")
    if holds(got, np.repeat(q[:1], b, axis=0), np.repeat(k[:1], b, axis=0)):
        return "layout", "every batch row gets batch row 0's positions: the other rows' positions are ignored"
    return None


@rope_property("alibi.per-head",
               rule="alibi.softmax-rows' bias_bound per element, up to one constant per (row, head, query), for every "
                    "batch row and head",
               cases=_batch_cases, pinned=_batch_pinned, skip_if=_skip_slopes_only, not_about=_not_batched)
def test_alibi_per_head(bind, case):
    e, h, q, k = case["expect"], case["n_heads"], case["q"], case["k"]
    try:
        got = bind(e).batch(h, q, k)
    except Unsupported as err:
        raise NotImplementedError(str(err)) from None
    worst = 0.0
    for r in range(len(q)):
        call = f"alibi({h}, q_positions={q.tolist()}, k_positions={k.tolist()})[batch row {r}]"
        try:
            worst = max(worst, _check_rows("alibi", got[r], e, h, q[r], k[r], call))
        except Failure as err:
            alone = _bias_of(bind, e, h, q[r], k[r])  # the same row as a batch of one
            try:
                _check_rows("alibi", alone, e, h, q[r], k[r], call)
            except Failure:
                raise err from None  # the row is wrong on its own: its own diagnosis
            found = _batch_fault(got, e, h, q, k) or (
                "layout", f"batch row {r} called alone (a batch of one) holds, but not within this batch: the rows of "
                          f"a batch are not independent")
            raise err.named(*found) from None
    return worst


# -- precision at large positions -----------------------------------------------------------------------
def _ladder(e: Expect) -> list[int]:
    """Queries at 1, 3, 15, ..., 2^k - 1 and max_position - 1: where a bias formed in too low a precision breaks."""
    out = [(1 << k) - 1 for k in range(1, 64) if (1 << k) - 1 < e.max_position - 1]
    return out + [e.max_position - 1]


@rope_property("alibi.precision",
               rule="bias_bound per element, up to one constant per row, at queries 2^k - 1 up to max_position - 1",
               cases=_head_cases, pinned=_head_pinned,
               skip_if=_skip_slopes_only, max_examples=8)
def test_alibi_precision(bind, case):
    e, h = case["expect"], case["n_heads"]
    worst, held = 0.0, None
    for p in _ladder(e):
        q, k = np.array([p], dtype=np.int64), np.array(alibi_precision_keys(p), dtype=np.int64)
        got = _bias_of(bind, e, h, q, k)
        try:
            worst = max(worst, _check_rows("alibi", got, e, h, q, k, f"alibi({h}, q_positions=[{p}], "
                                                                     f"k_positions={k.tolist()})"))
        except Failure as err:
            where = f"; {tolerance.bias_class_name(e)} held up to p = {held}" if held is not None else ""
            raise Failure(f"{err.message}{where}", err.diagnosis, err.ratio) from None
        held = p
    return worst, f"{tolerance.bias_class_name(e)} held up to p = {held}"
