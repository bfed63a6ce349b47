"""Multi-axis RoPE: which axis each pair turns with, measured pair by pair, against the sections, the interleaving
and the per-axis ladders."""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.properties import probe
from ropespec.spec import tolerance
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect
from ropespec.properties.diagnose.findings import _close, _with
from ropespec.properties.diagnose.frequencies import _other_base


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
    # each axis's pairs share its offset: read unwrapped from its slowest pair up (probe.shared_offset)
    unwrapped = [probe.shared_offset(rows[a], np.flatnonzero(owner == a)) for a in range(e.n_axes)]
    offset = np.array([unwrapped[a][j] for j, a in enumerate(owner)])
    return omega, offset, np.array([fr.precision for fr in rows])


#: the smallest offset said as one: a quarter of a position (half a patch is DINOv3's centring; the read-off offsets
#: of a correct port are within 1e-3 of its own)
OFFSET_MIN = 0.25


def _shift(c: float) -> str:
    """An offset as the words say it: an integer, or to a quarter (half a patch: corners for centres)."""
    q = round(c * 4) / 4
    return str(int(q)) if q.is_integer() else f"{q:g}"


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
    split = _split_pairs(f, e)
    if split:
        return split
    omega, offset, precision = axes_map(f, e)
    offset = offset - e.pair_offsets()  # measured against the axes' own offsets (axes_offset)
    A, k = omega.shape
    size = np.abs(omega)
    top = size.max(axis=0)
    got = tuple(int(a) for a in np.argmax(size, axis=0))
    want = e.pair_axes()
    th = reference.rates(e)  # per unit of each axis's position, as axes_map reads them
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
    if A > 1 and abs(c0) >= OFFSET_MIN and np.all(np.abs(c_all - c0) <= 1e-3 * max(1.0, abs(c0))):
        said = f" beyond the axes' offsets {list(e.axes_offset)}" if e.axes_offset else ""
        shifted = "position-offset", (f"at the zero vector every axis's pairs are already turned by {c0:.6g} times "
                                      f"their frequency{said}: positions on every axis are shifted by {_shift(c0)}"
                                      + (" (half a position: patch corners for centres, or centres for corners)"
                                         if abs(abs(c0) - 0.5) < 0.05 else ""))
    for a in range(A):
        mine = np.array([j for j in range(k) if want[j] == a])
        if shifted or not mine.size:
            continue
        c = float(np.median(offset[mine]))
        same = np.all(np.abs(offset[mine] - c) <= 1e-3 * max(1.0, abs(c)))
        if abs(c) >= OFFSET_MIN and same and not np.all(np.abs(c_all - c) <= 1e-3 * max(1.0, abs(c))):
            shifted = "axis-offset", (f"at the zero vector axis {names[a]}'s pairs are already turned by {c:.6g} times "
                                      f"their frequency: positions on {names[a]} are shifted by {_shift(c)}, the other "
                                      f"axes' are not")
    found = _axes_frequencies(e, omega, precision, got, th)
    return _with(shifted, found) if shifted else found


def _split_pairs(f, e: Expect) -> tuple[str, str] | None:
    """(not-a-rotation, evidence) when a pair's two outputs take their angles from different axes: moving one axis
    alone changes the cos-like output of e_a (at its pair's first dim) but not the sin-like one (at its second), or
    the other way, so the pair is turned by no single angle (a table split by other sizes than its pairs', as
    transformers' HunYuan-VL splits cat(freqs, freqs) by [2 s for s in sections] where its sections are repeated)."""
    d, A = e.head_dim, e.n_axes
    zero = probe.basis(f, d, np.zeros(A, dtype=np.int64))
    moved = []
    for a in range(A):
        v = np.zeros(A, dtype=np.int64)
        v[a] = min(5, e.max_position - 1)
        moved.append(np.abs(probe.basis(f, d, v) - zero) > 1e-3)
    for (ia, ib), (oa, ob) in zip(e.pairs(), e.out_pairs()):
        for src, (cos_at, sin_at) in ((ia, (oa, ob)), (ib, (ob, oa))):  # e_src's cos-like and sin-like outputs
            first = [a for a in range(A) if moved[a][src, cos_at]]
            second = [a for a in range(A) if moved[a][src, sin_at]]
            if first and second and first != second:
                return "not-a-rotation", (
                    f"pair ({ia}, {ib}) is no rotation: dim {src}'s output at dim {cos_at} turns with axis "
                    f"{'/'.join(e.axes[a] for a in first)} and at dim {sin_at} with axis "
                    f"{'/'.join(e.axes[a] for a in second)}, so its cos and sin come from different axes (a table split "
                    f"by other sizes than its pairs'); at equal positions on every axis (text tokens) it is a rotation")
    return None


def _axes_frequencies(e: Expect, omega, precision, got, th) -> tuple[str, str] | None:
    """Each pair's frequency on the axis it turns with against e's ladder: another base or another kind of ladder."""
    freq = np.array([omega[a, j] for j, a in enumerate(got)])
    scaled = _scaled_axes(e, freq, th, got)
    if scaled:
        return scaled
    tol = np.maximum(1e-6, 100 * np.nan_to_num(np.array([precision[a, j] for j, a in enumerate(got)]), nan=1.0))
    if _close(freq, th, tol):
        return None
    other = _other_base(freq, e, tol, None) if np.all(freq > 0) else None
    if other:
        return other
    for dim, name in normalising_dims(e):
        want = normalised_rates(e, dim)
        if _close(freq, want, tol):
            j = int(np.argmax(np.abs(th - freq) / th))
            a, k = got[j], e.ladder()[j][0]
            return "rotary-dim", (f"each axis's ladder is theta^(-2k/{dim}), the exponent normalised by {name} {dim}, "
                                  f"where each axis's own dims d_a = {list(e.axes_dims_rope)} are expected (every pair "
                                  f"to {float(np.max(tol)):.0e}; pair {j}, k = {k} of axis {e.axes[a]}, turns at "
                                  f"{freq[j]:.6g} per unit, {e.axes_kind()} ladders expect {th[j]:.6g})")
    for word, other, what in _other_ladders(e):
        if _close(freq, reference.rates(other), tol):
            return word, (f"the frequencies match {what} (pair {int(np.argmax(np.abs(th - freq)))} turns at "
                          f"{freq[int(np.argmax(np.abs(th - freq)))]:.6g} per unit, {e.axes_kind()} expects "
                          f"{th[int(np.argmax(np.abs(th - freq)))]:.6g})")
    return None


def normalising_dims(e: Expect) -> list[tuple[int, str]]:
    """(D, its name) for each dim other than an axis's own that per-axis ladders theta^(-2k/d_a) may be normalised by
    instead (head_dim, then the rotary dim where it is another), where some axis's d_a is not D; none for any other
    ladder. Read by the diagnosis and the fingerprint alike."""
    if e.axes_kind() != "per-axis" or e.axes_ladder != "theta":
        return []
    out: list[tuple[int, str]] = []
    for dim, name in ((e.head_dim, "head_dim"), (e.rotary_dim, "the rotary dim")):
        if any(dim != own for own in e.axes_dims_rope) and dim not in [d for d, _ in out]:
            out.append((dim, name))
    return out


def normalised_rates(e: Expect, dim: int) -> np.ndarray:
    """e's per-axis ladders each normalised by ``dim`` instead of its axis's own dims: pair j, the k-th of its axis,
    turns at its axis's scale times rope_theta^(-2k/dim) per unit of the axis's position."""
    k = np.array([i for i, _ in e.ladder()], dtype=np.float64)
    return e.pair_scales() * e.rope_theta ** (-2.0 * k / dim)


def _scaled_axes(e: Expect, freq, th, got) -> tuple[str, str] | None:
    """("scaling", evidence) where every pair of an axis turns at one factor times its rate, shared by the axis's pairs
    to a tenth of its distance from 1 (rounding scatters the pairs; a scale moves them together) and beyond what
    rounding allows every pair at once in float32 or the promised class (tolerance.rate_allowance): the axis's
    positions or coordinates are scaled, as linear scaling scales a 1-D RoPE's. A factor that is the axis's scale
    rounded to bfloat16 or float16 is a precision's, not a scale's: not said here."""
    if np.any(th <= 0) or np.any(freq <= 0):
        return None
    ratio = freq / th
    allowed = max(tolerance.rate_allowance(e), tolerance.rate_allowance(e.replace(angle_dtype="float32",
                                                                                   inv_freq_dtype="float32")))
    scale = e.axes_scale or (1.0,) * e.n_axes
    factors = {}
    for a in sorted(set(got)):
        mine = ratio[np.array(got) == a]
        c = float(np.median(mine))
        if np.max(np.abs(mine - c)) > 0.1 * abs(c - 1):
            return None  # not one factor: another model's to name
        if any(abs(c - float(round_to(scale[a], dt)) / scale[a]) <= 0.1 * abs(c - 1) for dt in ("bfloat16", "float16")):
            return None
        factors[a] = c
    if all(abs(c - 1) <= allowed for c in factors.values()):
        return None
    said = ", ".join(f"{e.axes[a]} {c:.9g}" + (f" (its scale {scale[a] * c:.9g}, expected {scale[a]:.9g})"
                                                if e.axes_scale else "") for a, c in factors.items())
    if len({round(c, 12) for c in factors.values()}) == 1:
        c = next(iter(factors.values()))
        return "scaling", (f"every pair turns {c:.9g} times its rate on every axis (each to a tenth of its distance "
                           f"from 1, beyond the {allowed:.1e} rounding allows): the "
                           + ("coordinates' scale is " if e.axes_scale else "positions are ")
                           + f"multiplied by {c:.9g} ({said}), as linear scaling by {1 / c:.9g} would")
    return "scaling", (f"each axis's pairs turn at one factor times their rate, beyond the {allowed:.1e} rounding "
                       f"allows: {said}; its positions or coordinates are scaled")


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
    if e.axes_dims_rope is not None:  # per-axis ladders: in chunks, or dealt per frequency (LTX-Video's)
        chunked = e.replace(axes_interleaved=False).pair_axes()
        by_frequency = tuple(j % A for j in range(e.n_pairs))
        if e.axes_interleaved and got == chunked:
            return "axes-chunked", (f"the pairs turn with the axes in chunks ({_runs(got, names)}), where "
                                    f"axes_interleaved deals them one of each axis per frequency (pair j on axis j "
                                    f"mod {A}) ({seen})")
        if not e.axes_interleaved and got == by_frequency:
            return "axes-interleaved", (f"the pairs turn with the axes in turn (pair j on axis j mod {A}), where the "
                                        f"axes' ladders {list(e.axes_dims_rope)} are chunks ({seen})")
    counts = [got.count(a) for a in range(A)]
    return "axes-sections", (f"the pairs turn with the axes as {_runs(got, names)} ({counts} pairs per axis), expected "
                             f"{_runs(want, names)} ({seen})")


def interleaved_axes(sections, n_pairs: int) -> tuple[int, ...]:
    """Qwen3-VL's rule applied to any sections, as its code does (pair j on axis a = j mod A when a > 0 and
    j < A sections[a], else on axis 0), even where they are no valid interleaved sections."""
    A = len(sections)
    return tuple(j % A if j % A and j < A * sections[j % A] else 0 for j in range(n_pairs))
