"""Mutations: changes to the definitions that each break something; every symbolic proof names, in its
``about``, the mutations of what it is about, and fails under each (:func:`ropespec.spec.proofs.audit`)."""

from __future__ import annotations

import contextlib
import dataclasses

from ropespec.spec import definitions, scaling
import numpy as np

from ropespec.spec.geometry import PairGeometry


def _pairs_swapped(self):
    r = self.rotary_dim
    if self.convention in ("interleaved", "rope_interleave"):
        return [(i, i + r // 2) for i in range(r // 2)]
    return [(2 * i, 2 * i + 1) for i in range(r // 2)]


_pairs_as_stated = PairGeometry.pairs


def _pairs_direction_ignored(self):
    return _pairs_as_stated(dataclasses.replace(self, direction="forward"))


def _pairs_head_dim(self):
    r = self.head_dim
    if self.convention in ("interleaved", "rope_interleave"):
        return [(2 * i, 2 * i + 1) for i in range(r // 2)]
    return [(i, i + r // 2) for i in range(r // 2)]


def _encode_gain_twice(expect, x, angles, cos, sin, gain=1, _orig=definitions.encode):
    return _orig(expect, x, angles, cos, sin, gain * gain) if gain != 1 else _orig(expect, x, angles, cos, sin, gain)


_ORIGINAL_PAIR_AXES, _ORIGINAL_LADDER = PairGeometry.pair_axes, PairGeometry.ladder


def _axes_chunked(self):
    """PairGeometry.pair_axes with mrope_interleaved read as chunked sections."""
    if self.mrope_interleaved:
        return tuple(a for a, size in enumerate(self.mrope_section) for _ in range(size))
    return _ORIGINAL_PAIR_AXES(self)


def _ladder_per_axis(self):
    """PairGeometry.ladder with every axis restarting its own ladder, normalised by its own dims (2 x its pairs)."""
    if not self.multi_axis:
        return _ORIGINAL_LADDER(self)
    axes = self.pair_axes()
    out, seen = [], {}
    for a_ in axes:
        out.append((seen.get(a_, 0), 2 * axes.count(a_)))
        seen[a_] = seen.get(a_, 0) + 1
    return tuple(out)


_yarn_bounds, _llama3_gamma, _mix = scaling.yarn_bounds, scaling.llama3_gamma, scaling.mix
#: name -> (object, attribute, replacement)
MUTATIONS: dict[str, tuple[object, str, object]] = {
    "R: reflection": (definitions, "rotate", lambda xa, xb, c_, s_: (xa * c_ + xb * s_, xa * s_ - xb * c_)),
    "R: doubled": (definitions, "rotate", lambda xa, xb, c_, s_: (2 * (xa * c_ - xb * s_), 2 * (xa * s_ + xb * c_))),
    "R: shear": (definitions, "rotate", lambda xa, xb, c_, s_: (xa + xb * s_, xb)),
    "R: transposed": (definitions, "rotate", lambda xa, xb, c_, s_: (xa * c_ + xb * s_, -xa * s_ + xb * c_)),
    "R: plus a bias": (definitions, "rotate", lambda xa, xb, c_, s_: (xa * c_ - xb * s_ + s_, xa * s_ + xb * c_)),
    "convention: swapped": (PairGeometry, "pairs", _pairs_swapped),
    "convention: over head_dim": (PairGeometry, "pairs", _pairs_head_dim),
    "direction: ignored": (PairGeometry, "pairs", _pairs_direction_ignored),
    "rotary_start: ignored": (PairGeometry, "pairs", lambda self: _pairs_as_stated(dataclasses.replace(self, rotary_start=0))),
    "factor: applied twice": (definitions, "encode", _encode_gain_twice),
    "ladder: b^(-i/r)": (scaling, "ladder", lambda b, i, r: b ** (-i / r)),
    "linear: theta * s": (scaling, "linear", lambda theta, s_: theta * s_),
    "ntk: b s": (scaling, "ntk_base", lambda b, s_, r: b * s_),
    "ntk: exponent r/(r-4)": (scaling, "ntk_base", lambda b, s_, r: b * s_ ** (r / (r - 4))),
    "mix: inverted": (scaling, "mix", lambda theta, m_, s_: m_ * theta + (1 - m_) * theta / s_),
    "mix: divides by s^2": (scaling, "mix", lambda theta, m_, s_: m_ * theta / s_**2 + (1 - m_) * theta),
    "yarn: betas swapped": (scaling, "yarn_bounds", lambda r, L_, b, bf, bs, M=scaling.MP: _yarn_bounds(r, L_, b, bs, bf, M)),
    "yarn: ramp (i - low)/high": (scaling, "yarn_ramp", lambda i, low, high: (i - low) / high),
    "yarn mscale: 0.1 ln s + 1.1": (scaling, "yarn_mscale", lambda s_, m_=1, M=scaling.MP: M.num("0.1") * m_ * M.log(s_) + M.num("1.1")),
    "llama3: lo and hi swapped": (scaling, "llama3_gamma", lambda L_, w, lo, hi: _llama3_gamma(L_, w, hi, lo)),
    "dynamic: factor s l/L": (scaling, "dynamic_factor", lambda s_, l, L_: s_ * l / L_),
    "PE: sin twice": (definitions, "pe_pair", lambda phi, cos, sin: (sin(phi), sin(phi))),
    "axes: neighbour's position added": (definitions, "axis_angles", lambda axes, pos, th: [
        (pos[a_] + pos[(a_ + 1) % len(pos)]) * t for a_, t in zip(axes, th)]),
    "axes: interleaving ignored": (PairGeometry, "pair_axes", _axes_chunked),
    "ladder: rule ignored": (PairGeometry, "ladder", lambda self: _ORIGINAL_LADDER(
        dataclasses.replace(self, axes_ladder="theta"))),
    "axes: per-frequency interleaving ignored": (PairGeometry, "pair_axes", lambda self: _ORIGINAL_PAIR_AXES(
        dataclasses.replace(self, axes_interleaved=False))),
    "coordinates: offset ignored": (PairGeometry, "pair_offsets", lambda self: np.zeros(self.n_pairs)),
    "coordinates: scale ignored": (PairGeometry, "pair_scales", lambda self: np.ones(self.n_pairs)),
    "ladder: per axis": (PairGeometry, "ladder", _ladder_per_axis),
    "ladder: shared": (PairGeometry, "ladder", lambda self: tuple((j, self.rotary_dim) for j in range(self.n_pairs))),
    "ALiBi: sign flipped": (definitions, "alibi_bias", lambda m_, i_, j_, symmetric=False: m_ * (i_ - j_)),
    "ALiBi: product of positions": (definitions, "alibi_bias", lambda m_, i_, j_, symmetric=False: -m_ * i_ * j_),
    "T5: log ratio inverted": (definitions, "t5_log_bucket", lambda x_, n_, md, log_ratio: log_ratio(n_ // 2, x_)
                               / log_ratio(md, n_ // 2) * (n_ - n_ // 2)),
    "xPos: keys scaled alike": (definitions, "xpos_pair_score", lambda zeta, m_, n_, sb, rd: zeta ** ((m_ + n_) / sb) * rd),
    "softmax: causal mask always": (definitions, "attention_weights",
                                    lambda scores, exp, causal=False, _o=definitions.attention_weights: _o(scores, exp, True)),
}


@contextlib.contextmanager
def mutated(name: str):
    """The definitions with one mutation applied (restored on exit)."""
    obj, attr, new = MUTATIONS[name]
    old = obj.__dict__[attr]
    setattr(obj, attr, new)
    try:
        yield
    finally:
        setattr(obj, attr, old)
