r"""The frequency tables and attention factors of RoPE's length-extension methods, as Hugging Face transformers
5.x defines them (``modeling_rope_utils.py``): the formulas, written once, that :mod:`ropespec.spec.methods`' classes compose
(one class per ``rope_type``, with its keys, its rules and where transformers' versions differ) and
:mod:`ropespec.spec.proofs` proves, and the table of an expectation evaluated in mpmath at any precision.

s = factor, r = rotary dim, theta_i = base^(-2i/r), L = original_max_position_embeddings (when a method needs it
and the dict has none, ``max_position`` stands for HF's ``max_position_embeddings``). transformers 4.57 keeps the
keys in ``config.rope_scaling``, 5.x in ``config.rope_parameters`` (ropespec reads both, see :mod:`ropespec.spec.presets`).
"""

from __future__ import annotations

import types

import mpmath

def original_length(expect) -> int:
    s = expect.rope_scaling or {}
    return int(s.get("original_max_position_embeddings") or expect.max_position)


# -- the formulas, written once -------------------------------------------------------------------
# Each is plain arithmetic on its arguments plus the functions of ``M`` (log, sqrt, pi, num): mpmath
# numbers with :data:`MP` here and in the reference, sympy symbols in :mod:`ropespec.spec.proofs`, which
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
