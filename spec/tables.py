"""The frequency table and attention factor of an expectation, in mpmath at any precision: the unscaled ladder (one
per axis for a per-axis or parity multi-axis RoPE) handed to the expectation's scaling method
(:mod:`ropespec.spec.methods`), which composes :mod:`ropespec.spec.scaling`'s formulas; and the key that determines a table, by which
the reference caches them."""

from __future__ import annotations

import json
from functools import lru_cache

import mpmath
import numpy as np

from ropespec.spec import definitions
from ropespec.spec.expectation import Expect, _thaw
from ropespec.spec.scaling import ladder


def table_variant(expect: Expect, seq_len: int | None) -> object:
    """What, besides the expectation, the table depends on for a call of length ``seq_len``:
    None for static types; the effective length for dynamic; "long"/"short" for longrope."""
    return expect.method.variant(expect, seq_len)


def table_key(expect: Expect, seq_len: int | None = None) -> tuple:
    """A hashable that determines the frequency table and attention factor of a call: base, rotary
    dim, the scaling dict (with max_position, which some types read) and the :func:`table_variant`."""
    axes = _axes_key(expect)
    if expect.rope_scaling is None:
        return (expect.rope_theta, expect.rotary_dim, None, None, None, axes)
    scaling = json.dumps(_thaw(expect.rope_scaling), sort_keys=True)
    return (expect.rope_theta, expect.rotary_dim, expect.max_position, scaling, table_variant(expect, seq_len), axes)


_AXES_FIELDS = ("mrope_section", "mrope_interleaved", "axes_dims_rope", "axes_parity", "axes_ladder", "axes_interleaved")


def _axes_key(expect: Expect) -> tuple | None:
    """How a multi-axis expectation deals pairs to axes and frequencies (None for 1-D RoPE): part of the table's
    key, since a per-axis or parity ladder changes the frequencies."""
    if not expect.multi_axis:
        return None
    return tuple((k, getattr(expect, k)) for k in _AXES_FIELDS)


def expect_of_key(key: tuple) -> Expect:
    """An expectation with the table :func:`table_key` describes (geometry only)."""
    base, r, max_position, scaling, _, axes = key
    return Expect(head_dim=r, rope_theta=base, max_position=max_position or 2,  # no scaling: not read
                  rope_scaling=None if scaling is None else json.loads(scaling), **dict(axes or ()))


def query_temperature(expect: Expect, positions) -> np.ndarray:
    """Each query row's temperature tau(p) (:func:`ropespec.spec.definitions.query_temperature`, the expectation's
    attention block), float64 (n,): ones where it has none."""
    block = expect.params("attention")
    p = np.asarray(positions, dtype=np.int64).reshape(-1)
    if not block.tempered:
        return np.ones(len(p))
    return definitions.query_temperature(p, block.query_temperature_beta, block.query_temperature_length,
                                         block.query_temperature_offset, np.log, lambda v: np.floor(v))


def score_temperature(expect: Expect) -> mpmath.mpf:
    """The factor attention's softmax scale carries beyond 1/sqrt(head_dim) (1 but for DeepSeek's YaRN, see
    :meth:`ropespec.spec.methods.yarn.Yarn.score_temperature`, where the attention applies it: the attention block's
    ``yarn_softmax_mscale``, false for Ministral 3's)."""
    if not expect.params("attention").yarn_softmax_mscale:
        return mpmath.mpf(1)
    return expect.method.score_temperature(expect)


def attention_factor(expect: Expect) -> mpmath.mpf:
    """The factor cos and sin are multiplied by (q and k each carry it; logits carry its square)."""
    return expect.method.attention_factor(expect)


def mixing_error(expect: Expect) -> list[float]:
    """For a mixing method (yarn, llama3: :attr:`ropespec.spec.methods.ScalingMethod.mixes`), per pair: the relative error of
    theta'_i, in unit roundoffs of the dtype it is computed in, that comes from the mixing coefficient m_i of
    theta' = m theta / s + (1 - m) theta (0 outside the ramp or band, where m is exactly 0 or 1).

    m is formed in that dtype and is off by the method's :meth:`~ropespec.spec.methods.ScalingMethod.mixing_bound`; an error
    dm moves theta' by dm (theta - theta / s), a relative error of dm (theta - theta / s) / theta'."""
    if not expect.method.mixes:
        return [0.0] * expect.n_pairs
    return list(_mixing_error(table_key(expect)))


@lru_cache(maxsize=256)
def _mixing_error(key: tuple) -> tuple[float, ...]:
    expect = expect_of_key(key)
    f = mpmath.mpf(expect.rope_scaling["factor"])
    with mpmath.workprec(64):
        theta = frequencies(Expect(head_dim=expect.rotary_dim, rope_theta=expect.rope_theta))
        scaled = frequencies(expect)
        out = []
        for t, t2 in zip(theta, scaled):
            span = t - t / f
            m = (t - t2) / span if span else mpmath.mpf(0)
            if m <= 0 or m >= 1:
                out.append(0.0)
                continue
            out.append(float(expect.method.mixing_bound(expect, m) * span / t2))
    return tuple(out)


def _powers(q, count: int) -> list[mpmath.mpf]:
    """q^0 ... q^(count - 1)."""
    out = [mpmath.mpf(1)]
    for _ in range(count - 1):
        out.append(out[-1] * q)
    return out


def frequencies(expect: Expect, variant: object = None) -> list[mpmath.mpf]:
    """theta'_i for every pair at the current mpmath precision (call inside ``mpmath.workprec``).
    ``variant`` is :func:`table_variant`'s answer for the call."""
    r = mpmath.mpf(expect.rotary_dim)
    base = mpmath.mpf(expect.rope_theta)
    n = expect.rotary_dim // 2

    def table(b):
        # ladder(b, i, r) for every i, as the powers q^i of q = ladder(b, 1, r): the same numbers, since
        # b^(-2i/r) = (b^(-2/r))^i, to i roundings of the working precision (>= 128 bits), and one exp/log
        # per table instead of one per pair (a decode past the original length needs a table per length)
        q = ladder(b, 1, r)
        out = [mpmath.mpf(1)]
        for _ in range(n - 1):
            out.append(out[-1] * q)
        return out

    theta = table(base)
    if not expect.shared_ladder():  # a ladder per axis, or the parity split: theta^(-2i/R) per pair
        need: dict[int, int] = {}  # per ladder R, how many of its powers the pairs read (i < need[R])
        for i, R in expect.ladder():
            need[R] = max(need.get(R, 0), i + 1)
        powers = {R: table(base) if R == expect.rotary_dim else _powers(ladder(base, 1, mpmath.mpf(R)), count)
                  for R, count in need.items()}
        return [powers[R][i] for i, R in expect.ladder()]
    return expect.method.frequencies(expect, theta, table, variant)
