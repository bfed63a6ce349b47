r"""The frequency tables and attention factors of every RoPE type, as Hugging Face transformers 5.x
defines them (``modeling_rope_utils.py``), stated once and evaluated in mpmath at any precision.

s = factor, r = rotary dim, theta_i = base^(-2i/r), L = original_max_position_embeddings (when a
type needs it and the dict has none, ``max_position`` stands for HF's ``max_position_embeddings``).

* default: theta_i; attention factor 1.
* linear (position interpolation): theta_i / s.
* ntk (static NTK-aware; not an HF type): base' = base * s^(r/(r-2)).
* dynamic: with l = max(seq_len, L), base' = base * (s l / L - (s - 1))^(r/(r-2)); equal to
  default while seq_len <= L. transformers takes L from ``max_position_embeddings``; ropespec reads
  it from ``original_max_position_embeddings`` when given, so that ``max_position`` (how far to test)
  can go beyond it.
* yarn: low/high = r ln(L / (2 pi beta)) / (2 ln base) for beta_fast (default 32) / beta_slow
  (default 1), floored/ceiled when ``truncate`` (default true), clamped to [0, r-1], high += 0.001 if
  equal; ramp_i = clamp((i - low)/(high - low), 0, 1); theta'_i = ramp_i theta_i / s + (1 - ramp_i) theta_i.
  Attention factor: explicit ``attention_factor``, else g(s, mscale)/g(s, mscale_all_dim) when both are
  given and non-zero, else g(s) = 0.1 ln s + 1 (1 when s <= 1), g(s, m) = 0.1 m ln s + 1.
* llama3: lambda_i = 2 pi / theta_i; lambda < L/high_freq_factor: unchanged; lambda > L/low_freq_factor:
  theta_i / s; in between (bounds inclusive): gamma = (L/lambda - low)/(high - low),
  theta' = (1 - gamma) theta / s + gamma theta.
* longrope: theta_i / ext_i, ext = long_factor if seq_len > L else short_factor; attention factor:
  explicit, else sqrt(1 + ln s / ln L) with s = factor (default max_position / L), 1 if s <= 1.

Where transformers versions differ: 4.57 keeps these keys in ``config.rope_scaling``, 5.x in
``config.rope_parameters`` (ropespec reads both, see :mod:`spec.presets`); YaRN's L falls back to
max_position_embeddings in 4.57 and is required (auto-filled) in 5.x; for LongRoPE 4.57 overrides
``factor`` with max_position / L whenever L is given, 5.x uses ``factor`` when present. ropespec
follows 5.x.
"""

from __future__ import annotations

import json
import types
from functools import lru_cache

import mpmath

from spec.expectation import Expect, _thaw

#: types whose frequency table depends on the sequence length of the call (seq_len = max position + 1)
SEQ_LEN_DEPENDENT = ("dynamic", "longrope")


def original_length(expect: Expect) -> int:
    s = expect.rope_scaling or {}
    return int(s.get("original_max_position_embeddings") or expect.max_position)


def table_variant(expect: Expect, seq_len: int | None) -> object:
    """What, besides the expectation, the table depends on for a call of length ``seq_len``:
    None for static types; the effective length for dynamic; "long"/"short" for longrope."""
    rt = expect.rope_type
    if rt == "dynamic":
        L = original_length(expect)
        return max(seq_len or L, L)
    if rt == "longrope":
        return "long" if seq_len is not None and seq_len > original_length(expect) else "short"
    return None


def table_key(expect: Expect, seq_len: int | None = None) -> tuple:
    """A hashable that determines the frequency table and attention factor of a call: base, rotary
    dim, the scaling dict (with max_position, which some types read) and the :func:`table_variant`."""
    axes = _axes_key(expect)
    if expect.rope_scaling is None:
        return (expect.rope_theta, expect.rotary_dim, None, None, None, axes)
    scaling = json.dumps(_thaw(expect.rope_scaling), sort_keys=True)
    return (expect.rope_theta, expect.rotary_dim, expect.max_position, scaling, table_variant(expect, seq_len), axes)


_AXES_FIELDS = ("mrope_section", "mrope_interleaved", "axes_dims_rope", "axes_parity")


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


# -- the formulas, written once -------------------------------------------------------------------
# Each is plain arithmetic on its arguments plus the functions of ``M`` (log, sqrt, pi, num): mpmath
# numbers with :data:`MP` here and in the reference, sympy symbols in :mod:`spec.proofs`, which
# proves its statements on these very functions (a change here that breaks an invariant fails a proof).

MP = types.SimpleNamespace(num=mpmath.mpf, log=mpmath.log, sqrt=mpmath.sqrt, pi=mpmath.pi)


def ladder(b, i, r):
    """The default frequency of pair i: theta_i = b^(-2i/r)."""
    return b ** (-2 * i / r)


def linear(theta, s):
    """Position interpolation: theta / s."""
    return theta / s


def ntk_base(b, s, r):
    """NTK-aware scaling's base: b s^(r/(r-2))."""
    return b * s ** (r / (r - 2))


def dynamic_factor(s, l, L):
    """Dynamic NTK's effective factor at length l > L: s l/L - (s - 1) (1 at l = L, growing by s/L per token)."""
    return s * l / L - (s - 1)


def dynamic_base(b, s, l, L, r):
    """Dynamic NTK's base at length l > L: NTK's base for the effective factor,
    b (s l/L - (s - 1))^(r/(r-2))."""
    return ntk_base(b, dynamic_factor(s, l, L), r)


def mix(theta, m, s):
    """theta' = m theta / s + (1 - m) theta: the share m of the frequency is divided by s."""
    return m * theta / s + (1 - m) * theta


def yarn_bounds(r, L, b, beta_fast, beta_slow, M=MP):
    """YaRN's (low, high) before truncation: the pair index at which the rotation count over L is
    beta_fast (low: below it unchanged) and beta_slow (high: above it divided by s)."""
    def corr(beta):
        return r * M.log(L / (beta * 2 * M.pi)) / (2 * M.log(b))
    return corr(beta_fast), corr(beta_slow)


def yarn_ramp(i, low, high):
    """YaRN's share of pair i divided by s, before clamping to [0, 1]."""
    return (i - low) / (high - low)


def wavelength(theta, M=MP):
    return 2 * M.pi / theta


def llama3_gamma(L, wavelen, lo, hi):
    """Llama 3's smoothing inside its band: the share of theta kept (1 - gamma is divided by s)."""
    return (L / wavelen - lo) / (hi - lo)


def yarn_mscale(s, m=1, M=MP):
    """YaRN's g(s, m) = 0.1 m ln s + 1 (for s > 1)."""
    return M.num("0.1") * m * M.log(s) + 1


def longrope_mscale(s, L, M=MP):
    """LongRoPE's attention factor sqrt(1 + ln s / ln L) (for s > 1)."""
    return M.sqrt(1 + M.log(s) / M.log(L))


def _g(s, m=1):
    return mpmath.mpf(1) if s <= 1 else yarn_mscale(s, m)


def score_temperature(expect: Expect) -> mpmath.mpf:
    """The factor attention's softmax scale carries beyond 1/sqrt(head_dim): DeepSeek's YaRN (``mscale_all_dim``
    given and not 0) multiplies it by g(s, mscale_all_dim)^2 (transformers' DeepseekV3Attention: softmax_scale *=
    mscale^2), so that the scores carry g(s, mscale)^2 in all with cos and sin's g(s, mscale)/g(s, mscale_all_dim);
    1 for every other expectation."""
    s = expect.rope_scaling or {}
    if expect.rope_type == "yarn" and s.get("mscale_all_dim"):
        return _g(mpmath.mpf(s["factor"]), mpmath.mpf(s["mscale_all_dim"])) ** 2
    return mpmath.mpf(1)


def attention_factor(expect: Expect) -> mpmath.mpf:
    """The factor cos and sin are multiplied by (q and k each carry it; logits carry its square)."""
    s = expect.rope_scaling or {}
    rt = expect.rope_type
    if s.get("attention_factor") is not None and rt in ("yarn", "longrope"):
        return mpmath.mpf(s["attention_factor"])
    if rt == "yarn":
        f = mpmath.mpf(s["factor"])
        ms, msa = s.get("mscale"), s.get("mscale_all_dim")
        if ms and msa:
            return _g(f, mpmath.mpf(ms)) / _g(f, mpmath.mpf(msa))
        return _g(f)
    if rt == "longrope":
        f = mpmath.mpf(s.get("factor") or mpmath.mpf(expect.max_position) / original_length(expect))
        if f <= 1:
            return mpmath.mpf(1)
        return longrope_mscale(f, mpmath.mpf(original_length(expect)))
    return mpmath.mpf(1)


def yarn_range(expect: Expect) -> tuple[mpmath.mpf, mpmath.mpf]:
    """YaRN's (low, high) pair indices: the ramp runs from low (unchanged) to high (divided by s)."""
    s = expect.rope_scaling
    r, base, L = expect.rotary_dim, mpmath.mpf(expect.rope_theta), original_length(expect)

    low, high = yarn_bounds(r, L, base, mpmath.mpf(s.get("beta_fast") or 32), mpmath.mpf(s.get("beta_slow") or 1))
    if s.get("truncate", True):
        low, high = mpmath.floor(low), mpmath.ceil(high)
    low, high = max(low, mpmath.mpf(0)), min(high, mpmath.mpf(r - 1))
    if low == high:
        high += mpmath.mpf("0.001")
    return low, high


def mixing_error(expect: Expect) -> list[float]:
    """For yarn and llama3, per pair: the relative error of theta'_i, in unit roundoffs of the dtype
    it is computed in, that comes from the mixing coefficient m_i of theta' = m theta / s + (1 - m) theta
    (0 outside the ramp or band, where m is exactly 0 or 1).

    m is formed in that dtype: yarn's ramp (i - low)/(high - low) is off by at most
    u (3 m + |low| / (high - low) + 2); llama3's gamma = (L/lambda - lo)/(hi - lo), with lambda =
    2 pi / theta rounded, by at most u (3 hi + lo + 1)/(hi - lo). An error dm moves theta' by
    dm (theta - theta / s), a relative error of dm (theta - theta / s) / theta'."""
    if expect.rope_type not in ("yarn", "llama3"):
        return [0.0] * expect.n_pairs
    return list(_mixing_error(table_key(expect)))


@lru_cache(maxsize=256)
def _mixing_error(key: tuple) -> tuple[float, ...]:
    expect = expect_of_key(key)
    rt = expect.rope_type
    s = expect.rope_scaling
    f = mpmath.mpf(s["factor"])
    with mpmath.workprec(64):
        theta = frequencies(Expect(head_dim=expect.rotary_dim, rope_theta=expect.rope_theta))
        scaled = frequencies(expect)
        if rt == "yarn":
            low, high = yarn_range(expect)
            dm_fixed = abs(low) / (high - low) + 2
        else:
            lo, hi = mpmath.mpf(s["low_freq_factor"]), mpmath.mpf(s["high_freq_factor"])
            dm_fixed = (3 * hi + lo + 1) / (hi - lo)
        out = []
        for t, t2 in zip(theta, scaled):
            span = t - t / f
            m = (t - t2) / span if span else mpmath.mpf(0)
            if m <= 0 or m >= 1:
                out.append(0.0)
                continue
            dm = (3 * m + dm_fixed) if rt == "yarn" else dm_fixed
            out.append(float(dm * span / t2))
    return tuple(out)


def _powers(q, R: int) -> list[mpmath.mpf]:
    """q^0 ... q^(R/2 - 1)."""
    out = [mpmath.mpf(1)]
    for _ in range(R // 2 - 1):
        out.append(out[-1] * q)
    return out


def frequencies(expect: Expect, variant: object = None) -> list[mpmath.mpf]:
    """theta'_i for every pair at the current mpmath precision (call inside ``mpmath.workprec``).
    ``variant`` is :func:`table_variant`'s answer for the call."""
    r = mpmath.mpf(expect.rotary_dim)
    base = mpmath.mpf(expect.rope_theta)
    s = expect.rope_scaling or {}
    rt = expect.rope_type
    idx = [mpmath.mpf(i) for i in range(expect.rotary_dim // 2)]

    def table(b):
        # ladder(b, i, r) for every i, as the powers q^i of q = ladder(b, 1, r): the same numbers, since
        # b^(-2i/r) = (b^(-2/r))^i, to i roundings of the working precision (>= 128 bits), and one exp/log
        # per table instead of one per pair (a decode past the original length needs a table per length)
        q = ladder(b, 1, r)
        out = [mpmath.mpf(1)]
        for _ in idx[1:]:
            out.append(out[-1] * q)
        return out

    theta = table(base)
    if not expect.shared_ladder():  # a ladder per axis, or the parity split: theta^(-2i/R) per pair
        powers = {}
        for i, R in expect.ladder():
            if R not in powers:
                powers[R] = table(base) if R == expect.rotary_dim else _powers(ladder(base, 1, mpmath.mpf(R)), R)
        return [powers[R][i] for i, R in expect.ladder()]
    if rt == "default":
        return theta
    f = mpmath.mpf(s["factor"]) if "factor" in s else None
    if rt == "linear":
        return [linear(t, f) for t in theta]
    if rt == "ntk":
        return table(ntk_base(base, f, r))
    if rt == "dynamic":
        L = original_length(expect)
        if variant is None or variant <= L:
            return theta
        return table(dynamic_base(base, f, mpmath.mpf(variant), mpmath.mpf(L), r))
    if rt == "yarn":
        low, high = yarn_range(expect)
        return [mix(t, min(max(yarn_ramp(i, low, high), mpmath.mpf(0)), mpmath.mpf(1)), f) for i, t in zip(idx, theta)]
    if rt == "llama3":
        L = mpmath.mpf(s["original_max_position_embeddings"])
        lo, hi = mpmath.mpf(s["low_freq_factor"]), mpmath.mpf(s["high_freq_factor"])
        out = []
        for t in theta:
            lam = wavelength(t)
            if lam < L / hi:
                out.append(t)
            elif lam > L / lo:
                out.append(linear(t, f))
            else:
                out.append(mix(t, 1 - llama3_gamma(L, lam, lo, hi), f))
        return out
    if rt == "longrope":
        ext = s["long_factor"] if variant == "long" else s["short_factor"]
        return [linear(t, mpmath.mpf(e)) for t, e in zip(theta, ext)]
    raise NotImplementedError(f"rope_type {rt!r}")
