"""Black-box fingerprint of a RoPE implementation: what it computes, inferred by probing.

Only the head dim, the dtype and how far to probe come from the expectation; everything else is
measured (:mod:`ropespec.properties.probe`): the convention and the dims left alone, each pair's frequency (angles
unwrapped while doubling the position), the direction, a constant position offset, the attention
factor, whether the table changes with the sequence length, the base, the scaling curve that fits
(with its parameters), the precision class seen at large positions, the preset it matches, and the expectation that
reproduces all of it (``--expect``), confirmed on the implementation, or why no expectation does.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ropespec.implementations.contract import Failure

from ropespec import reference
from ropespec.properties import diagnose, precision, probe
from ropespec.properties.diagnose.axes import normalising_dims
from ropespec.spec import methods, presets, tolerance
from ropespec.spec.expectation import CONVENTIONS, Expect, ExpectationError



@dataclass
class Fingerprint:
    head_dim: int
    convention: str  # "half" | "interleaved" | "rope_interleave" | "explicit" | "not a rotation of pairs"
    pairs: list[tuple[int, int]]
    rotary_dim: int
    problem: str | None = None
    #: the first dim that turns (dims before it and from rotary_start + rotary_dim on pass through)
    rotary_start: int = 0
    #: how many of the rotary_dim / 2 pairs turn, where the others stay still among them (proportional RoPE)
    turning: int | None = None
    direction: str = "forward"  # the expectation's words (ropespec.spec.schema.DIRECTIONS)
    offset: float = 0.0
    attention_factor: float = 1.0
    thetas: list[float] = field(default_factory=list)
    precision: float | None = None  # worst relative uncertainty of a measured frequency
    length_dependent: bool = False
    base: float | None = None
    base_precision: float | None = None
    scaling: dict | None = None  # the rope_scaling dict that fits, or None for the default table
    curve: str = "unknown"  # default | linear | ntk-or-default | yarn | llama3 | dynamic | longrope | unknown
    curve_error: float | None = None  # worst relative difference between the fitted table and the measured one
    precision_class: str | None = None
    max_errors: dict[str, float] = field(default_factory=dict)  # position -> max error / pair norm
    presets: list[str] = field(default_factory=list)  # every preset with the same RoPE (several can share one)
    same_frequencies: dict[str, str] = field(default_factory=dict)  # preset -> its convention, where only that differs
    #: the expected method's mistake whose table is the fitted one too (Llama 3.1's bands swapped is Llama 4's step)
    same_as_mistake: str | None = None
    #: the expectation that reproduces what was measured (every field read, its values as rounded as the measurement
    #: allows), confirmed against the implementation; None where none does, and then ``no_expect`` says why
    expect: dict | None = None
    no_expect: str | None = None
    #: a multi-axis RoPE: each pair's axis, the kind (chunked, interleaved, per-axis, parity) and the sizes
    axes: dict | None = None

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def switches(self) -> bool:
        """Its curve names a method whose factors switch with the length (LongRoPE's short and long)."""
        return _switches(self.curve)


def _ordered(pr: probe.Pairing, conv: str, d: int, r: int, start: int = 0):
    """((a, b), (oa, ob)) for every pair in order of frequency: the convention's order, else by a."""
    if conv == "explicit":
        return pr.laid_out()
    e = Expect(head_dim=d, rotary_dim=r, rotary_start=start, convention=conv)
    return list(zip(e.pairs(), e.out_pairs()))


def _laid_out(pr: probe.Pairing, d: int, r: int) -> tuple[str, int]:
    """(convention, rotary_start) whose pairs and layout these are: the dims that turn start at the first dim of the
    pairs (LTX-Video's leading dims pass through); ("explicit", 0) where no convention lays them out."""
    conv = pr.convention(d, r)
    if conv is not None or not pr.pairs:
        return conv or "explicit", 0
    start = min(a for a, _ in pr.pairs)
    if start + r > d:
        return "explicit", 0
    for c in CONVENTIONS:
        ec = Expect(head_dim=d, rotary_dim=r, rotary_start=start, convention=c)
        laid = list(zip(ec.pairs(), ec.out_pairs()))
        if sorted(pr.pairs) == sorted(p for p, _ in laid) and all(pr.out.get(p) == o for p, o in laid):
            return c, start
    return "explicit", 0


def _fit_base(theta: np.ndarray, r: int, *, prefix: bool = False):
    """Base from the longest ladder prefix theta_i = theta_0 b^(-2i/r); (base, worst residual), and the
    prefix's length when ``prefix``."""
    lt = np.log(theta)
    k = min(4, len(theta))
    while True:
        i = np.arange(k)
        slope, a = np.polyfit(i, lt[:k], 1) if k > 1 else (0.0, lt[0])
        resid = float(np.max(np.abs(lt[:k] - (a + slope * i)))) if k > 1 else 0.0
        if k == len(theta):
            break
        nxt = abs(lt[k] - (a + slope * k))
        if nxt > 1e-9 + 10 * resid:
            break
        k += 1
    return (math.exp(-slope * r / 2), resid, k) if prefix else (math.exp(-slope * r / 2), resid)


def _candidates(base, head_dim, r, conv, measured, max_position, turning=None, start=0):
    """Scaled expectations worth comparing with the measured table; where only the first ``turning`` of the r / 2
    pairs turn, each method's that leaves the rest still."""
    plain = Expect(head_dim=head_dim, rotary_dim=r, rope_theta=base, convention=conv, max_position=max_position,
                   rotary_start=start)
    if turning is not None:
        for m in methods.REGISTRY.values():
            scaling = m.fit_still(turning, r)
            if scaling is not None:
                yield m.name, plain.replace(rope_scaling=scaling)
        return
    for cand in diagnose.curves(plain, np.asarray(measured, dtype=np.float64)):  # the diagnosis's own fits
        yield cand.rope_type, cand


def _as_measured(expect: Expect, base: float, r: int, conv: str, start: int) -> list[Expect]:
    """The expected configuration on the pairs and base measured (none where they are no expectation's)."""
    try:
        return [expect.replace(rope_theta=base, rotary_dim=r, partial_rotary_factor=None, convention=conv,
                               rotary_start=start)]
    except ValueError:
        return []


def _switches(curve: str) -> bool:
    """Whether a curve names a method whose factors switch with the length (LongRoPE's short and long)."""
    return curve in methods.REGISTRY and methods.get(curve).switches_at_length


def fingerprint(f, expect: Expect) -> Fingerprint:
    """Fingerprint f (float64 in and out) for expect's head_dim, dtype and max_position (and, for a multi-axis RoPE,
    its number of axes: each pair's axis is measured)."""
    if expect.multi_axis:
        return fingerprint_axes(f, expect)
    d, top = expect.head_dim, expect.max_position
    y = probe.basis(f, d, 1)
    bad = ~np.isfinite(y)
    if bad.any():  # nothing to fingerprint: said as what it is, not as a convention or a base
        raise Failure(f"f(e_j, 1) is not finite: {int(bad.sum())} of {bad.size} values (first at dim "
                      f"{int(np.argwhere(bad)[0][1])}); nothing to fingerprint", "non-finite")
    pr = probe.convention(f, d)
    r = 2 * len(pr.pairs)
    fp = Fingerprint(head_dim=d, convention="not a rotation of pairs" if pr.problem else "explicit", pairs=pr.pairs, rotary_dim=r,
                     problem=pr.problem)
    if pr.problem or not pr.pairs:
        fp.no_expect = _NOT_PAIRS if pr.problem else "nothing turns: no dim's output changes with the position"
        return fp
    conv, start = _laid_out(pr, d, r)
    widened = pr.widened(d) if conv == "explicit" else None
    if widened is not None:  # the first pairs of a wider rotary width turn, the others stay still
        conv, r = widened
        fp.rotary_dim, fp.turning = r, len(pr.pairs)
    fp.convention, fp.rotary_start = conv, start
    pairs = _ordered(pr, conv, d, r, start)[:len(pr.pairs)]
    # every call pinned to one sequence length, so that a table that depends on it stays put
    fr = probe.frequencies(f, d, pairs, max_position=top, seq_len=top)
    short = probe.frequencies(f, d, pairs, max_position=top, seq_len=min(64, top))
    _, norms = probe.angles(f, d, pairs, 1)
    fp.attention_factor = float(np.median(norms))
    if np.all(fr.thetas < 0):
        fp.direction = "reverse"
    theta = np.abs(fr.thetas)
    fp.thetas = theta.tolist()
    fp.precision = float(np.nanmax(fr.precision))
    fp.offset = float(np.median(fr.offset))
    tol = max(1e-9, 100 * fp.precision)
    fp.length_dependent = not np.allclose(np.abs(short.thetas), theta, rtol=tol, atol=0)
    table = np.abs(short.thetas) if fp.length_dependent else theta
    fp.base, fp.base_precision, k = _fit_base(table, r, prefix=True)
    # configs use round bases: take the shortest whose ladder reproduces the measured prefix as closely as
    # it was measured (a base rounded to 6 digits is off by up to 1e-6, which at p = 1e6 is most of a
    # float32 class's bound)
    for digits in (6, 8, 10, 12, 15):
        rounded = float(f"{fp.base:.{digits}g}")
        ladder = table[0] * rounded ** (-2.0 * np.arange(k) / r)
        if np.max(np.abs(ladder - table[:k]) / table[:k]) <= max(4 * fp.precision, 4e-16):
            fp.base = rounded
            break
    if conv == "explicit":
        fp.no_expect = _explicit(fp)
        return fp
    fits = max(tol, 1e-6)
    best = None
    for curve, cand in _candidates(fp.base, d, r, conv, table, top, fp.turning, start):
        err = float(np.max(np.abs(reference.thetas(cand)[:len(table)] - table) / table))
        if best is None or err < best[0] - 1e-12:
            best = (err, curve, cand)
        if err <= fits:  # the simplest curve that fits (candidates come simplest first): default before a
            best = (err, curve, cand)  # yarn of factor 1.000001 that fits the float32 rounding a little closer
            break
    if best is None:  # no method leaves these pairs still
        fp.no_expect = f"{_frequencies_fit_nothing(fp)}: no scaling method leaves its still pairs still"
        return fp
    err, curve, cand = best
    if err > fits and not fp.length_dependent and fp.turning is None:  # a known mistake of a method (ramp reversed, bands swapped, betas
        # swapped): the diagnosis's list, of the expected configuration first (check reads its mistakes so), then of
        # each curve fitted
        for cand_ in [*_as_measured(expect, fp.base, r, conv, start), *(c for _, c in _candidates(
                fp.base, d, r, conv, table, top, start=start))]:
            if not cand_.method.scales:
                continue
            for tag, what, tv in diagnose.scaling_variants(cand_, None):
                if tag != "unscaled" and float(np.max(np.abs(tv - table) / table)) <= fits:
                    fp.curve, fp.curve_error = what, float(np.max(np.abs(tv - table) / table))
                    fp.scaling = cand_.to_dict()["rope_scaling"]
                    fp.no_expect = (f"its frequencies are {what} of {cand_.rope_type} "
                                    f"{json.dumps(fp.scaling, separators=(',', ':'))}: a mistake of the method, which "
                                    f"no expectation states")
                    return fp
    if fp.length_dependent:
        dyn = _fit_dynamic(f, fp, theta, cand.replace(rope_scaling=None), top)
        if dyn is not None and dyn[0] <= fits:
            err, curve, cand = dyn
        else:
            found = _fit_longrope(f, d, pairs, conv, r, theta, np.abs(short.thetas), top, fp, start)
            err, curve, cand = found if found is not None else (None, "unknown", cand)
    cand = cand.replace(direction=fp.direction)  # the direction measured is the expectation's too
    if err is not None and err <= fits:
        fp.curve, fp.curve_error = (curve if methods.get(curve).scales else "ntk-or-default"), err
        fp.scaling = cand.to_dict()["rope_scaling"]
        if expect.method.scales and cand.rope_scaling != expect.rope_scaling and not fp.length_dependent:
            # the fit is a config of its own, and perhaps also a known mistake of the expected one: both are said
            fp.same_as_mistake = next((what for tag, what, tv in diagnose.scaling_variants(expect, None)
                                       if tag != "unscaled" and len(tv) == len(table)
                                       and float(np.max(np.abs(tv - table) / table)) <= fits), None)
        g = fp.attention_factor
        if "attention_factor" in cand.method.keys and abs(reference.attention_factor(cand) - g) > 1e-6 * g:
            try:  # the measured factor differs from the method's default g(s): state it explicitly
                cand = cand.replace(rope_scaling=dict(fp.scaling, attention_factor=float(f"{g:.9g}")))
                fp.scaling = cand.to_dict()["rope_scaling"]
            except ExpectationError:
                pass
        fp.presets = _presets(cand, g, tol)
        stated = _stated(cand, fp.presets).replace(dtype=expect.dtype)
        fp.precision_class, fp.max_errors = _precision(f, stated, top)
        if not fp.presets:  # the frequencies of a preset in another convention (Meta's interleaved Llama 2 code)
            for conv in ("half", "interleaved", "rope_interleave"):
                if conv != cand.convention:
                    fp.same_frequencies.update({n: conv for n in _presets(cand.replace(convention=conv), g, tol)})
        _reproduce(f, fp, stated, top)
    else:
        fp.curve, fp.curve_error = curve if _switches(curve) else "unknown", err
        fp.no_expect = (f"{_frequencies_fit_nothing(fp)}" if not _switches(curve) else
                        f"its per-pair factors change with the length, and no {curve} table fits them (to "
                        f"{err:.1e}, where {fits:.1e} is read)" if err is not None else
                        f"its per-pair factors change with the length, and no {curve} table fits them")
    return fp


#: why a map that is no rotation of pairs has no expectation
_NOT_PAIRS = "it is no rotation of pairs of dims, which every expectation's RoPE is"


def _explicit(fp: Fingerprint) -> str:
    """Why pairs laid out as no convention has no expectation."""
    return (f"its pairs {fp.pairs[:4]}{'...' if len(fp.pairs) > 4 else ''} are laid out as no convention (half, "
            f"interleaved, rope_interleave) from any first dim lays them out")


#: the worst relative precision of a frequency read off angles that grow linearly with the position (the
#: diagnosis's rule, properties/diagnose/frequencies.py: _linear_in_p); a worse one is no frequency read
_LINEAR = 1e-3


def _unread(fp: Fingerprint) -> str | None:
    """Why the frequencies were not read, where their precision says they were not: None where they were."""
    if fp.precision is None or fp.precision <= _LINEAR:
        return None
    return (f"its frequencies are read to {fp.precision:.1e} only, where angles that grow linearly with the position "
            f"are read to {_LINEAR:.0e} or better: a pair that turns by more than pi per position is not identifiable "
            f"from outputs at integer positions, and a table that wraps or is not one frequency per pair is no ladder")


def _frequencies_fit_nothing(fp: Fingerprint) -> str:
    """Why frequencies no curve fits have no expectation."""
    said = "its frequencies fit no ladder of one base under any scaling method"
    if fp.curve_error is not None:
        said += f" (the closest to {fp.curve_error:.1e}, where they are read to {fp.precision:.1e})"
    return _unread(fp) or said


#: positions the reproducing expectation is confirmed at, besides the precision class's: p = 0 (the identity of a
#: 1-D RoPE: a position offset shows there first) and small ones, where a wrong field shows before rounding grows
_CONFIRM = (0, 1, 2, 3, 5, 7, 33, 257, 999, 65521, 1048573, 16777213)

#: the class an expectation states when the measured one is as fine or finer: the default promise (float32 angles from
#: float32 inverse frequencies), which every finer class meets; a coarser class measured is stated as it is
_PROMISED = ("exact", "float64", "float32")


def _reproduce(f, fp: Fingerprint, stated: Expect, top: int) -> None:
    """Sets fp.expect to ``stated`` (the fit, or the matched preset's values) with the precision class measured and its
    values as simple as what was measured allows (:func:`_simplest_expect`), where the implementation is within that
    class's bound of it at every position of :data:`_CONFIRM` below ``top`` and its attention factor is the
    expectation's; otherwise fp.no_expect says which measured field no expectation states."""
    if fp.precision_class is None:
        worst = max(fp.max_errors.items(), key=lambda kv: kv[1]) if fp.max_errors else None
        fp.no_expect = ("no precision class holds" + (f" (error {worst[1]:.2g} x the pair norm at p = {worst[0]}, "
                                                       f"beyond even float16's bound)" if worst else ""))
        return
    if fp.precision_class not in _PROMISED:
        stated = precision.with_class(stated, fp.precision_class)
    g, want = fp.attention_factor, reference.attention_factor(stated)
    if abs(g - want) > tolerance.attention_factor_allowance(stated, want):
        fp.no_expect = (f"every pair comes out {g:.9g} times its input, where "
                        + (f"{stated.rope_type}'s attention factor is {want:.9g}" if stated.method.scales else
                           "an unscaled RoPE's is 1")
                        + f": no field of the expectation states another")
        return
    pos = np.array(sorted({p for p in _CONFIRM if p < top} | {top - 1}), dtype=np.int64)
    declared = precision.class_of(stated)
    simplest = _simplest_expect(fp, stated)
    for e in dict.fromkeys((simplest, stated)):  # the simplest values first, then those read
        sw = precision.measure(f, e, pos, vectors=2, classes=(declared,))
        bad = np.flatnonzero(~(sw.ratio[declared] <= 1.0))
        if not bad.size:
            fp.expect = e.to_dict()
            return
    i = int(bad[0])
    at = f"p = {int(pos[i])}" + (" on every axis" if stated.multi_axis else "")
    fp.no_expect = (f"under the expectation its readings give ({declared} class), its output at {at} is off by "
                    f"{sw.max_error[i]:.2g} x the pair norm, {sw.ratio[declared][i]:.3g} times the class's bound"
                    + (f": at the first position its pairs are already turned (a position offset of {fp.offset:.6g}), "
                       f"which no field of " + ("a 1-D expectation" if not stated.multi_axis else
                                                 "the expectation's axes_offset as read") + " states"
                       if int(pos[i]) == 0 else ": a field the fingerprint does not read differs"))


def _simplest_expect(fp: Fingerprint, stated: Expect) -> Expect:
    """``stated`` with its base (unless a preset's) and each axis's scale rounded to the simplest values whose rates
    every measured pair's is within the declared class's rounding of (tolerance.rate_allowance) and the reading's
    precision: the values a config states (base 100 where float32 code measures 100.0000044, scale pi/200 where it
    measures 0.0157079635). The confirmation decides whether the implementation holds its class against them."""
    if fp.length_dependent or not fp.thetas:
        return stated
    measured = np.asarray(fp.thetas)
    allowed = tolerance.rate_allowance(stated) + 4 * (fp.precision or 0.0)

    def fits(e: Expect) -> bool:
        rates = reference.rates(e)[:len(measured)]
        return bool(np.max(np.abs(rates - measured) / measured) <= allowed)

    out = stated
    if stated.axes_scale is not None:
        scales = tuple(_simplest(v, allowed) for v in stated.axes_scale)
        if scales != stated.axes_scale and fits(out.replace(axes_scale=scales)):
            out = out.replace(axes_scale=scales)
    if not fp.presets:
        for digits in range(1, 16):
            b = float(f"{stated.rope_theta:.{digits}g}")
            if b == out.rope_theta:
                break
            if b > 1 and fits(out.replace(rope_theta=b)):
                out = out.replace(rope_theta=b)
                break
    return out


def _simplest(v: float, rel: float) -> float:
    """The simplest number within ``rel`` of v, relative: (1, pi or 2 pi) x n/d with the smallest bound on d of 8, 64,
    512, 4096, else v to the fewest significant digits, else v."""
    from fractions import Fraction

    for most in (8, 64, 512, 4096):
        for unit in (1.0, math.pi, 2 * math.pi):
            q = Fraction(v / unit).limit_denominator(most)
            if q and abs(float(q) * unit - v) <= rel * v:
                return unit * q.numerator / q.denominator
    for digits in range(1, 16):
        r = float(f"{v:.{digits}g}")
        if abs(r - v) <= rel * v:
            return r
    return v


_PLAIN = {"mrope_section": None, "mrope_interleaved": False, "axes_dims_rope": None, "axes_parity": False,
          "axis_names": None}


def fingerprint_axes(f, expect: Expect) -> Fingerprint:
    """A multi-axis RoPE, probed with basis vectors along each of expect's n_axes axes: the convention (at text tokens,
    every axis at one position), each pair's axis and frequency per unit of it, then the kind that deals the pairs
    (chunked, interleaved, per-axis ladders, parity), the sizes, the base and the preset."""
    d, top, A = expect.head_dim, expect.max_position, expect.n_axes
    text = probe.text_view(f, expect)
    y = probe.basis(text, d, 1)
    if not np.isfinite(y).all():
        raise Failure(f"f(e_j, 1) is not finite: {int((~np.isfinite(y)).sum())} of {y.size} values; nothing to "
                      f"fingerprint", "non-finite")
    pr = probe.convention(text, d)
    r = 2 * len(pr.pairs)
    fp = Fingerprint(head_dim=d, convention="not a rotation of pairs" if pr.problem else "explicit", pairs=pr.pairs,
                     rotary_dim=r, problem=pr.problem)
    if pr.problem or not pr.pairs:
        fp.no_expect = _NOT_PAIRS if pr.problem else "nothing turns: no dim's output changes with the position"
        return fp
    conv, start = _laid_out(pr, d, r)
    fp.convention, fp.rotary_start = conv, start
    pairs = _ordered(pr, conv, d, r, start)
    rows = []
    for a in range(A):
        def along(x, p, a=a):
            v = np.zeros((len(p), A), dtype=np.int64)
            v[:, a] = p
            return f(x, v)
        rows.append(probe.frequencies(along, d, pairs, max_position=top))
    omega = np.abs(np.array([fr.thetas for fr in rows]))
    owner = [int(a) for a in np.argmax(omega, axis=0)]
    theta = omega[owner, np.arange(len(owner))]
    fp.thetas = theta.tolist()
    fp.precision = float(np.nanmax([rows[a].precision[j] for j, a in enumerate(owner)]))
    axis_offsets = [probe.shared_offset(rows[a], [j for j, o in enumerate(owner) if o == a]) for a in range(A)]
    fp.offset = float(np.median([axis_offsets[a][j] for j, a in enumerate(owner)]))
    if np.all(np.array([rows[a].thetas[j] for j, a in enumerate(owner)]) < 0):
        fp.direction = "reverse"
    _, norms = probe.angles(text, d, pairs, 1)
    fp.attention_factor = float(np.median(norms))
    counts = [owner.count(a) for a in range(A)]
    fp.axes = {"n_axes": A, "pair_axes": owner, "pairs_per_axis": counts, "kind": "unknown"}
    if conv == "explicit":
        fp.no_expect = _explicit(fp)
        return fp
    if min(counts) == 0:
        fp.no_expect = f"axis {counts.index(0)} turns no pair: no expectation of {A} axes leaves one without pairs"
        return fp
    tol = max(1e-9, 100 * fp.precision)
    chunked = [a for a in range(A) for _ in range(counts[a])]
    interleaved = [j % A if j % A and j < A * counts[j % A] else 0 for j in range(len(owner))]
    parity = A == 2 and counts[0] == counts[1] and owner == chunked
    plain = Expect(head_dim=d, rotary_dim=r, rotary_start=start, convention=conv, max_position=top)
    layouts = []
    if owner == chunked:
        layouts += [("chunked", {"mrope_section": counts}), ("per-axis", {"axes_dims_rope": [2 * c for c in counts]})]
        if parity:
            layouts.append(("parity", {"axes_parity": True}))
    if owner == interleaved and owner != chunked:
        layouts.append(("interleaved", {"mrope_section": counts, "mrope_interleaved": True}))
    if owner == [j % A for j in range(len(owner))] and len(set(counts)) == 1 and owner != chunked:
        # a ladder per axis dealt one pair of each axis per frequency (LTX-Video's, Kimi K2.5's)
        layouts.append(("per-axis", {"axes_dims_rope": [2 * c for c in counts], "axes_interleaved": True}))
    # a per-axis ladder's rule: theta^(-2k/d_a), then the ascending and descending ones (LTX-Video's theta^linspace)
    layouts += [(kind, {**fields, "axes_ladder": rule}) for kind, fields in list(layouts) if kind == "per-axis"
                for rule in ("ascending", "descending")]
    # per-axis ladders each start at theta^0 = 1, so an axis whose first pair turns at s != 1 per position has scale s
    # (real coordinates, DINOv3's 2 pi x 2/H), read off before the fit; a scaled reading is the last tried, since a
    # ladder of another layout is a per-axis one scaled too (Pixtral's odd indices: theta^(-1/32) theta^(-2k/32))
    scaled = [(kind, {**fields, "axes_scale": s}) for kind, fields in layouts if kind == "per-axis"
              for s in [_axes_scales(theta, plain.replace(**fields).ladder(), owner, A, tol)] if s is not None]
    unscaled = [(k, {**f, "axes_scale": None}) for k, f in layouts]
    # each reading of a layout's own ladders, then theirs normalised by another dim (head_dim, the rotary dim) than
    # each axis's own: theta^(-2k/D) on every axis, one ratio per step where the axes' own ladders have one each
    # (FLUX's get_1d_rotary_pos_embed handed head_dim); where the axes' dims are equal that is their own ladder of
    # another base, the first read
    readings = ([(k, f_, None) for k, f_ in unscaled] + _renormalised(plain, unscaled)
                + [(k, f_, None) for k, f_ in scaled] + _renormalised(plain, scaled))
    for kind, fields, norm in readings:
        shape = plain.replace(**fields)
        # the base from the ladder's exponents: ln theta_j = -(2 i_j / R_j) ln b, fitted through the origin
        ladder = shape.ladder() if norm is None else tuple((i, norm[0]) for i, _ in shape.ladder())
        unit = theta / shape.pair_scales()
        expo = np.array([2.0 * i / R for i, R in ladder])  # an ascending ladder's are negative
        keep = expo != 0
        if not keep.any():
            continue
        lnb = float(np.sum(-np.log(unit[keep]) * expo[keep]) / np.sum(expo[keep] ** 2))
        base = math.exp(lnb)
        for digits in (6, 8, 10, 12, 15):
            rounded = float(f"{base:.{digits}g}")
            if rounded > 1 and np.max(np.abs(rounded ** -expo - unit) / unit) <= max(4 * fp.precision, 4e-16):
                base = rounded
                break
        if base <= 1:
            continue
        cand = shape.replace(rope_theta=base, axes_offset=_axes_offsets(axis_offsets, owner, A), direction=fp.direction)
        rates = reference.rates(cand) if norm is None else shape.pair_scales() * base ** -expo
        err = float(np.max(np.abs(rates - theta) / theta))
        if err <= max(tol, 1e-6):
            fp.base, fp.base_precision, fp.curve, fp.curve_error = base, err, "ntk-or-default", err
            fp.axes.update(kind=kind, **{k: v for k, v in fields.items()
                                         if k not in ("mrope_interleaved", "axes_interleaved") and v is not None})
            if fields.get("axes_interleaved"):
                fp.axes["kind"] = "per-axis, one pair of each axis per frequency"
            if cand.axes_offset is not None:
                fp.axes["axes_offset"] = list(cand.axes_offset)
            if norm is not None:
                fp.axes["axes_normalised_by"] = {"dim": norm[0], "as": norm[1]}
                fp.no_expect = (f"each axis's ladder is normalised by {norm[1]} {norm[0]}, theta^(-2k/{norm[0]}), "
                                f"where an expectation's per-axis ladders are each normalised by the axis's own "
                                f"dims (axes_dims_rope {list(cand.axes_dims_rope)}); no field states another "
                                f"normalising dim")
                break
            fp.presets = _presets(cand, fp.attention_factor, tol)
            stated = _stated(cand, fp.presets).replace(dtype=expect.dtype)
            fp.precision_class, fp.max_errors = _precision(f, stated, top)
            _reproduce(f, fp, stated, top)
            break
    else:
        fp.no_expect = _unread(fp) or (f"its pairs' axes {fp.axes['pairs_per_axis']} and frequencies fit no way of "
                                       f"dealing pairs to axes (sections chunked or interleaved, per-axis ladders, a "
                                       f"parity split) at one base")
    return fp


def _renormalised(plain: Expect, readings) -> list:
    """(kind, fields, (D, its name)) for every per-axis reading of the theta rule and each dim D other than its axes'
    own that its ladders may be normalised by (:func:`ropespec.properties.diagnose.axes.normalising_dims`)."""
    out = []
    for kind, fields in readings:
        shape = plain.replace(**fields)
        out += [(kind, fields, norm) for norm in normalising_dims(shape)]
    return out


def _axes_offsets(axis_offsets, owner: list[int], A: int) -> list[float] | None:
    """Each axis's offset where its pairs agree on one (Llama 4 vision's patches counted from 1, DINOv3's centres at
    0.5 - H/2): the angle at the zero vector over the frequency, unwrapped per axis (probe.shared_offset), said to a
    thousandth; None where every axis starts at 0 or an axis's pairs do not agree."""
    out = []
    for a in range(A):
        c = np.array([axis_offsets[a][j] for j in range(len(owner)) if owner[j] == a])
        m = float(np.median(c)) if c.size else 0.0
        if np.any(np.abs(c - m) > 1e-3 * max(1.0, abs(m))):
            return None
        m = round(m * 1000) / 1000
        out.append(int(m) if m.is_integer() else m)
    return out if any(out) else None


def _axes_scales(theta, ladder, owner: list[int], A: int, tol: float) -> list[float] | None:
    """Each axis's scale, read off its first pair (theta^0 = 1 of its own ladder), where one differs from 1: said as
    pi or 2 pi times a fraction of small integers, or a fraction, where one is within ``tol`` (4 pi / 14 is DINOv3's
    2 pi x 2/14); None where every axis turns 1 per position."""
    first = {}
    for j, (i, _) in enumerate(ladder):
        if i == 0:
            first.setdefault(owner[j], float(theta[j]))
    if len(first) < A or all(abs(v - 1) <= tol for v in first.values()):
        return None
    return [_nice(first[a], tol) for a in range(A)]


def _nice(v: float, tol: float) -> float:
    """v as the float of (1, pi or 2 pi) x n/d with d <= 64, where one is within ``tol`` relative; else v."""
    from fractions import Fraction

    for unit in (1.0, math.pi, 2 * math.pi):
        q = Fraction(v / unit).limit_denominator(64)
        if q and abs(float(q) * unit - v) <= tol * v:
            return unit * q.numerator / q.denominator
    return v


def _fit_longrope(f, d, pairs, conv, r, long_th, short_th, top, fp, start=0):
    """A LongRoPE table: one set of per-pair factors up to an original length L, another beyond it.
    L is the first sequence length at which the long table is used (found by bisection on seq_len); the
    factors are stated against the base the ladder fit gives when the short table is a ladder (equal
    factors), else against base 10000 (the factors and the base cannot be told apart from the table alone)."""
    def is_long(seq):
        phi, _ = probe.angles(f, d, pairs, 1, seq)
        return bool(np.max(np.abs(np.abs(phi) - long_th) / long_th) < np.max(np.abs(np.abs(phi) - short_th) / long_th))

    lo, hi = min(64, top), top  # short at lo, long at hi
    if is_long(lo) or not is_long(hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if is_long(mid) else (mid, hi)
    L = lo  # the longest length that still uses the short factors
    base = fp.base if fp.base_precision is not None and fp.base_precision < 1e-6 else 10000.0
    plain = Expect(head_dim=d, rotary_dim=r, rope_theta=base, convention=conv, max_position=top, rotary_start=start)
    th0 = reference.thetas(plain)
    scaling = {"rope_type": "longrope", "short_factor": [float(f"{v:.9g}") for v in th0 / short_th],
               "long_factor": [float(f"{v:.9g}") for v in th0 / long_th], "original_max_position_embeddings": L,
               "attention_factor": float(f"{fp.attention_factor:.9g}")}
    try:
        cand = plain.replace(rope_scaling=scaling)
    except ExpectationError:
        return None
    fp.base = base
    err = max(float(np.max(np.abs(reference.thetas(cand, L) - short_th) / short_th)),
              float(np.max(np.abs(reference.thetas(cand, top) - long_th) / long_th)))
    return err, "longrope", cand


def _fit_dynamic(f, fp, theta, plain, top):
    """A dynamic NTK table: default at short lengths; past its original length the base grows. Its factor and
    original length from the diagnosis's own fit (diagnose.dynamic_fit: the base read at two lengths)."""
    fit = diagnose.dynamic_fit(f, plain.replace(max_position=top), top, 64)
    if fit is None:
        return None
    s, L, _ = fit
    cand = plain.replace(rope_scaling={"rope_type": "dynamic", "factor": s, "original_max_position_embeddings": L})
    return float(np.max(np.abs(reference.thetas(cand, top) - theta) / theta)), "dynamic", cand


def _precision(f, e: Expect, top: int) -> tuple[str | None, dict[str, float]]:
    pos = np.array([p for p in (999, 65521, 1048573, 16777213) if p < top] or [(top - 2) | 1], dtype=np.int64)
    pos = np.minimum(pos, top - 1)
    sw = precision.measure(f, e, pos, vectors=2)
    holds = [c for c in ("exact", "float64", "float32", "bfloat16", "float16") if np.all(sw.ratio[c] <= 1.0)]
    errors = {str(int(p)): float(v) for p, v in zip(sw.positions, sw.max_error)}
    return (holds[0] if holds else None), errors


def _stated(cand: Expect, matched: list[str]) -> Expect:
    """What the precision class is measured against: the matched preset's RoPE (its exact values) where one matches,
    else the fit. A fitted base is a measurement, right to the digits that reproduce the ladder it was fitted to (a base
    of 17 significant digits, HunyuanOCR's 1e4 x 1000^(128/126), is off in its last), and that last-digit error alone
    puts a float64 implementation outside the strict class it holds."""
    if not matched:
        return cand
    pe = presets.get(matched[0])  # presets that match share one RoPE
    try:
        return cand.replace(rope_theta=pe.rope_theta, rope_scaling=pe.rope_scaling)
    except ExpectationError:  # the preset's scaling says more than this probe's domain holds: the fit, then
        return cand


def _presets(cand: Expect, g: float, tol: float) -> list[str]:
    found = []
    for name in presets.rotary():  # a NoPE layer's preset turns nothing: no RoPE to match
        pe = presets.get(name)
        if (pe.head_dim, pe.rotary_dim, pe.rotary_start, pe.convention) != \
                (cand.head_dim, cand.rotary_dim, cand.rotary_start, cand.convention):
            continue
        if (pe.multi_axis, pe.axes_kind(), pe.pair_axes(), pe.axes_offset) != \
                (cand.multi_axis, cand.axes_kind(), cand.pair_axes(), cand.axes_offset):
            continue  # another way of dealing pairs to axes (a 1-D model's RoPE is no M-RoPE's), or other offsets
        want = reference.rates(pe)
        got = reference.rates(cand)
        # relative where a pair turns; a still pair (proportional RoPE's, frequency 0) matches only a still one
        off = np.abs(want - got) / np.where(want > 0, want, 1.0)
        if (np.max(off) <= max(tol, 1e-6) and np.array_equal(want > 0, got > 0)
                and abs(reference.attention_factor(pe) - g) <= 1e-6 * g):
            found.append(name)
    return found
