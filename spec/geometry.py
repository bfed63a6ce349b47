"""The pair geometry of a RoPE: which dims turn together, with which position axis, at which frequency index, and
where each pair's results are written, in one object that the reference, the properties, the implementations'
adapters, the diagnoses and the fingerprint ask.

A :class:`PairGeometry` is read off an expectation (:attr:`ropespec.spec.expectation.Expect.geometry`, which answers
the same questions by asking it): the convention pairs dims (i, i + r/2) (half) or (2i, 2i + 1) (interleaved,
rope_interleave, the latter writing its results in the half layout); ``rotary_dim`` dims from ``rotary_start`` (0: the
first) turn and the rest pass through; a multi-axis RoPE deals its pairs to position axes (chunked or interleaved sections of one ladder, a
ladder per axis, or Pixtral's parity split) and may offset an axis. The proofs' mutations patch this class's methods,
so that a proof about the geometry fails when the geometry is broken. :func:`validate_axes` is the rule an
expectation's multi-axis fields are held to.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ropespec.spec.schema import _is_int, _is_number, _short, AXES_LADDERS, AXES_MAX, AXES_MIN, DEFAULT_AXIS_NAMES, ExpectationError, RANGES


@dataclass(frozen=True)
class PairGeometry:
    """Which dims of a head turn together, on which axis and at which frequency index (the expectation's fields of
    the same names, validated there)."""

    head_dim: int
    rotary_dim: int
    rotary_start: int = 0
    convention: str = "half"
    direction: str = "forward"
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    axes_dims_rope: tuple[int, ...] | None = None
    axes_parity: bool = False
    axis_names: tuple[str, ...] | None = None
    axes_offset: tuple[float, ...] | None = None
    axes_scale: tuple[float, ...] | None = None
    axes_ladder: str = "theta"
    axes_interleaved: bool = False

    @classmethod
    def of(cls, expect) -> "PairGeometry":
        """The geometry an expectation states (its fields of these names)."""
        return cls(**{f.name: getattr(expect, f.name) for f in dataclasses.fields(cls)})

    @property
    def n_pairs(self) -> int:
        """Number of rotated pairs, rotary_dim / 2."""
        return self.rotary_dim // 2

    # -- multi-axis RoPE: which axis each pair turns with, and at which frequency -----------------------------------
    @property
    def multi_axis(self) -> bool:
        """Whether positions are vectors (n, A), one integer per axis (mrope_section, axes_dims_rope or
        axes_parity), rather than one integer per row."""
        return self.mrope_section is not None or self.axes_dims_rope is not None or self.axes_parity

    @property
    def n_axes(self) -> int:
        """A, the number of position axes (1 for 1-D RoPE)."""
        sizes = self.mrope_section or self.axes_dims_rope
        return len(sizes) if sizes else (2 if self.axes_parity else 1)

    @property
    def axes(self) -> tuple[str, ...]:
        """The axes' names, in the order of the position columns."""
        return self.axis_names or DEFAULT_AXIS_NAMES[self.n_axes]

    def axes_kind(self) -> str | None:
        """How pairs are dealt to axes (:data:`AXES_KINDS`), None for 1-D RoPE: a shared ladder in chunks
        (``mrope_section``) or interleaved (``mrope_interleaved``), a ladder per axis (``axes_dims_rope``), or
        Pixtral's parity split of a shared ladder (``axes_parity``)."""
        if self.mrope_section is not None:
            return "interleaved" if self.mrope_interleaved else "chunked"
        if self.axes_dims_rope is not None:
            return "per-axis"
        return "parity" if self.axes_parity else None

    def shared_ladder(self) -> bool:
        """Whether every pair's frequency is the 1-D ladder's, theta^(-2j/r) (so equal axes give 1-D RoPE)."""
        return self.axes_kind() in (None, "chunked", "interleaved")

    def pair_axes(self) -> tuple[int, ...]:
        """The axis each pair turns with (0 for every pair of a 1-D RoPE). Chunked: axis a owns the next
        section[a] pairs; interleaved (Qwen3-VL): pair j is on axis a = j mod A when a > 0 and j < A section[a],
        else on axis 0; per-axis: axis a owns the next axes_dims_rope[a] / 2 pairs; parity: the first half of the
        pairs on axis 0, the second on axis 1."""
        k, kind = self.n_pairs, self.axes_kind()
        if kind == "interleaved":
            A, sec = self.n_axes, self.mrope_section
            return tuple(j % A if j % A and j < A * sec[j % A] else 0 for j in range(k))
        if kind is None:
            return (0,) * k
        if kind == "per-axis" and self.axes_interleaved:  # LTX-Video: one pair of each axis per frequency, in turn
            return tuple(j % self.n_axes for j in range(k))
        if kind == "parity":
            sizes = (k // 2, k // 2)
        elif kind == "per-axis":
            sizes = tuple(d // 2 for d in self.axes_dims_rope)
        else:
            sizes = self.mrope_section
        return tuple(a for a, size in enumerate(sizes) for _ in range(size))

    def ladder(self) -> tuple[tuple[int, int], ...]:
        """Each pair's frequency as (i, R): theta_j = rope_theta^(-2 i / R). 1-D and shared ladders: (j, r);
        per-axis ladders: (k, d_a), k the pair's index within its axis's d_a dims (``axes_ladder`` theta), or (k,
        -+2 (K_a - 1)) for theta^(+-k/(K_a - 1)) over the axis's K_a pairs (ascending, descending; R any for a single
        pair, k = 0); parity: (2k, r) on axis 0, (2k + 1, r) on axis 1, k the index within the axis."""
        r, kind = self.rotary_dim, self.axes_kind()
        if kind in (None, "chunked", "interleaved"):
            return tuple((j, r) for j in range(self.n_pairs))
        out, seen = [], [0] * self.n_axes
        for a in self.pair_axes():
            i = seen[a]
            seen[a] += 1
            if kind != "per-axis":
                out.append((2 * i + a, r))
            elif self.axes_ladder == "theta":
                out.append((i, self.axes_dims_rope[a]))
            else:
                span = 2 * (self.axes_dims_rope[a] // 2 - 1) or 2
                out.append((i, -span if self.axes_ladder == "ascending" else span))
        return tuple(out)

    def pair_offsets(self) -> np.ndarray:
        """Each pair's axis's offset (``axes_offset``), float64 (n_pairs,): zeros where there is none."""
        if self.axes_offset is None:
            return np.zeros(self.n_pairs)
        return np.array(self.axes_offset, dtype=np.float64)[list(self.pair_axes())]

    def pair_scales(self) -> np.ndarray:
        """Each pair's axis's scale (``axes_scale``), float64 (n_pairs,): ones where there is none. A pair turns at its
        frequency times this per unit of its axis's position."""
        if self.axes_scale is None:
            return np.ones(self.n_pairs)
        return np.array(self.axes_scale, dtype=np.float64)[list(self.pair_axes())]

    @property
    def coordinates(self) -> bool:
        """Whether an axis's coordinate is other than its position (an offset or a scale)."""
        return self.axes_offset is not None or self.axes_scale is not None

    @property
    def integer_offsets(self) -> bool:
        """Whether every axis's offset is an integer, so that a position plus an offset is a position again (the
        properties that call f at p + o ask this)."""
        return all(float(o).is_integer() for o in self.axes_offset or ())

    def coordinate(self, positions, xp=np):
        """Each pair's coordinate from rows' positions already read per pair ((n, n_pairs) or (n, 1)): (p + offset)
        times scale, in ``xp`` (numpy, or torch on the positions' device); the positions themselves without
        :attr:`coordinates`."""
        if not self.coordinates:
            return positions
        def like(a):
            return xp.asarray(a) if xp is np else xp.as_tensor(a, dtype=positions.dtype, device=positions.device)
        return (positions + like(self.pair_offsets())) * like(self.pair_scales())

    def pair_positions(self, positions, scaled: bool = True) -> np.ndarray:
        """The coordinate each pair turns with, float64: rows' positions (n, A) of a multi-axis RoPE give (n, n_pairs),
        column j read from axis :meth:`pair_axes` ``[j]``; positions (n,) give (n, 1), one for every pair (broadcast):
        of a 1-D RoPE, or of a multi-axis RoPE's text tokens, at one position on every axis; each then plus its
        axis's offset and times its axis's scale (:meth:`coordinate`, (n, n_pairs) then). ``scaled=False`` leaves
        the scale out, for a caller that folds it into the frequencies (an exact product there)."""
        p = np.asarray(positions, dtype=np.float64)
        if not self.multi_axis or p.ndim < 2:
            p = p[..., None]
        else:
            p = p[..., list(self.pair_axes())]
        if scaled:
            return self.coordinate(p)
        return p if self.axes_offset is None else p + self.pair_offsets()

    def accepts_positions(self, shape: tuple[int, ...], n: int) -> bool:
        """Whether an oracle takes positions of this shape for n rows: (n,), or (n, A) for a multi-axis RoPE (whose
        (n,) are text tokens, every axis at that position)."""
        return tuple(shape) == (n,) or (self.multi_axis and tuple(shape) == (n, self.n_axes))

    def rows_at(self, values) -> np.ndarray:
        """Rows at the given positions: (n,) for 1-D RoPE; for a multi-axis RoPE row i puts values[(i + a) mod n] on
        axis a, so that every axis sees every value and no row (of more than one value) has one on every axis."""
        v = np.asarray(values, dtype=np.int64).reshape(-1)
        if not self.multi_axis:
            return v
        n = len(v)
        return np.array([[v[(i + a) % n] for a in range(self.n_axes)] for i in range(n)], dtype=np.int64)

    def position_shape(self, n: int) -> tuple[int, ...]:
        """The shape of n rows' positions: (n,), or (n, A) for a multi-axis RoPE."""
        return (n, self.n_axes) if self.multi_axis else (n,)

    @property
    def rotated(self) -> slice:
        """The dims that turn, [rotary_start, rotary_start + rotary_dim): those of the pairs, in and out."""
        return slice(self.rotary_start, self.rotary_start + self.rotary_dim)

    @property
    def passthrough(self) -> np.ndarray:
        """The dims that pass through unchanged, in order: before rotary_start and from rotary_start + rotary_dim on."""
        return np.r_[0:self.rotary_start, self.rotary_start + self.rotary_dim:self.head_dim].astype(np.int64)

    def pairs(self) -> list[tuple[int, int]]:
        """Index pairs (a, b) of the input rotated together, pair i turning at theta_i: (a, b) turns to
        (x_a cos - x_b sin, x_a sin + x_b cos). The reverse direction is the same pair in the other order, since
        turning (b, a) by +phi turns (a, b) by -phi: the direction is a question of the geometry, asked here once."""
        r, s = self.rotary_dim, self.rotary_start
        if self.convention in ("interleaved", "rope_interleave"):
            pairs = [(s + 2 * i, s + 2 * i + 1) for i in range(r // 2)]
        else:
            pairs = [(s + i, s + i + r // 2) for i in range(r // 2)]
        return [(b, a) for a, b in pairs] if self.direction == "reverse" else pairs

    def out_pairs(self) -> list[tuple[int, int]]:
        """Where pair i's two results are written: (a, b) of :meth:`pairs` (in place) but for
        ``rope_interleave``, which writes them to (i, i + r/2), the half layout (in the pair's order)."""
        if self.convention == "rope_interleave":
            return dataclasses.replace(self, convention="half").pairs()
        return self.pairs()

    def pair_index(self) -> tuple[slice | np.ndarray, ...]:
        """(a, b, out_a, out_b): :meth:`pairs` and :meth:`out_pairs` as numpy indices of the head dim, each a
        slice (every convention's are strided ranges: a view, no gather) or, for a single pair, an array."""
        def index(ix):
            if len(ix) > 1 and len({q - p for p, q in zip(ix, ix[1:])}) == 1 and ix[1] > ix[0]:
                return slice(ix[0], ix[-1] + 1, ix[1] - ix[0])
            return np.array(ix)

        a, b = zip(*self.pairs())
        oa, ob = zip(*self.out_pairs())
        return tuple(index(list(ix)) for ix in (a, b, oa, ob))

    def output_dims(self) -> list[int]:
        """Where each input dim's result is written: ``output_dims()[j]`` is the output dim of input dim j
        (the identity but for ``rope_interleave``)."""
        perm = list(range(self.head_dim))
        for (a, b), (oa, ob) in zip(self.pairs(), self.out_pairs()):
            perm[a], perm[b] = oa, ob
        return perm


def _number(v) -> int | float:
    """An offset as stated: an int when it is one (Llama 4's 1 stays 1 in a report), else a float."""
    return int(v) if float(v).is_integer() else float(v)


def validate_axes(e) -> None:
    """An expectation's multi-axis fields, validated and normalised in place (set through object.__setattr__, as the
    frozen expectation sets its own): one way of dealing pairs to axes at most, sizes that add up, offsets inside
    the domain, one name per axis, no length scaling. ``e`` is the expectation being built."""
    given = [k for k in ("mrope_section", "axes_dims_rope") if getattr(e, k) is not None]
    if e.axes_parity:
        given.append("axes_parity")
    for key in ("mrope_interleaved", "axes_parity"):
        if not isinstance(getattr(e, key), bool):
            raise ExpectationError(key, f"must be true or false, got {_short(getattr(e, key))}")
    if len(given) > 1:
        raise ExpectationError(given[1], f"cannot be given with {given[0]}: one way of dealing pairs to axes")
    if e.mrope_interleaved and e.mrope_section is None:
        raise ExpectationError("mrope_interleaved", "needs mrope_section (the pairs of each axis)")
    if e.axes_ladder not in AXES_LADDERS:
        raise ExpectationError("axes_ladder", f"must be {RANGES['axes_ladder']}, got {_short(e.axes_ladder)}")
    if not isinstance(e.axes_interleaved, bool):
        raise ExpectationError("axes_interleaved", f"must be true or false, got {_short(e.axes_interleaved)}")
    for key, off in (("axes_ladder", "theta"), ("axes_interleaved", False)):
        if getattr(e, key) != off and e.axes_dims_rope is None:
            raise ExpectationError(key, "needs axes_dims_rope (a ladder per axis)")
    if e.axes_interleaved and len(set(e.axes_dims_rope)) != 1:
        raise ExpectationError("axes_interleaved", f"needs axes_dims_rope of equal sizes (one pair of each axis per "
                                                   f"frequency), got {_short(e.axes_dims_rope)}")
    if not given:
        for key in ("axis_names", "axes_offset", "axes_scale"):
            if getattr(e, key) is not None:
                raise ExpectationError(key, "needs a multi-axis expectation (mrope_section, axes_dims_rope or "
                                            "axes_parity)")
        return
    k = e.n_pairs
    if e.mrope_section is not None or e.axes_dims_rope is not None:
        key = given[0]
        sizes = getattr(e, key)
        if (not isinstance(sizes, (list, tuple)) or not AXES_MIN <= len(sizes) <= AXES_MAX
                or not all(_is_int(v) for v in sizes)):
            raise ExpectationError(key, f"must be {RANGES[key]}, got {_short(sizes)}")
        sizes = tuple(sizes)
        object.__setattr__(e, key, sizes)
        if key == "mrope_section":
            if min(sizes) < 1 or sum(sizes) != k:
                raise ExpectationError(key, f"must be {RANGES[key]} = {k} (rotary_dim {e.rotary_dim}), got "
                                            f"{list(sizes)} (sum {sum(sizes)})")
            if e.mrope_interleaved:  # Qwen3-VL's and Qwen3.5's strided slice a:A*s_a:A takes s_a pairs
                A = len(sizes)
                for a, size in enumerate(sizes[1:], start=1):
                    if a + A * (size - 1) >= k:
                        raise ExpectationError(key, f"with mrope_interleaved, axis {a}'s {size} pairs sit at j = "
                                                    f"{a}, {a + A}, ..., {a + A * (size - 1)}, so its last pair "
                                                    f"{a} + {A} x {size - 1} must be < rotary_dim/2 = {k}, got "
                                                    f"{list(sizes)}")
        else:
            if min(sizes) < 2 or any(v % 2 for v in sizes) or sum(sizes) != e.rotary_dim:
                raise ExpectationError(key, f"must be {RANGES[key]} = {e.rotary_dim}, got {list(sizes)} "
                                            f"(sum {sum(sizes)})")
    elif k % 2:
        raise ExpectationError("axes_parity", f"needs an even number of rotary pairs (two axes of "
                                              f"rotary_dim/4 each), got rotary_dim {e.rotary_dim}")
    if e.rope_scaling is not None:
        raise ExpectationError("rope_scaling", f"a multi-axis RoPE takes no length scaling here (rope_type "
                                               f"default), got {e.rope_type!r}")
    offset = e.axes_offset
    if offset is not None:
        if (not isinstance(offset, (list, tuple)) or len(offset) != e.n_axes
                or not all(_is_number(v) and abs(v) < e.max_position for v in offset)):
            raise ExpectationError("axes_offset", f"must be {e.n_axes} finite numbers, one per axis, each below "
                                                  f"max_position {e.max_position} in size, got {_short(offset)}")
        object.__setattr__(e, "axes_offset", None if not any(offset) else tuple(_number(v) for v in offset))
    scale = e.axes_scale
    if scale is not None:
        if (not isinstance(scale, (list, tuple)) or len(scale) != e.n_axes
                or not all(_is_number(v) and v > 0 for v in scale)):
            raise ExpectationError("axes_scale", f"must be {e.n_axes} finite numbers > 0, one per axis, got "
                                                 f"{_short(scale)}")
        object.__setattr__(e, "axes_scale", None if all(v == 1 for v in scale) else tuple(float(v) for v in scale))
    names = e.axis_names
    if names is not None:
        if (not isinstance(names, (list, tuple)) or len(names) != e.n_axes
                or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names)):
            raise ExpectationError("axis_names", f"must be {e.n_axes} distinct non-empty names, one per axis, "
                                                 f"got {_short(names)}")
        object.__setattr__(e, "axis_names", tuple(names))
