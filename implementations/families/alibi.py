"""The ALiBi family: ``alibi(n_heads, q_positions, k_positions) -> bias (n_heads, n_q, n_k)``, the bias added to the
attention scores of each head (in the bhqk layout, positions (batch, n) and the bias (batch, n_heads, n_q, n_k)), or the slopes alone, ``slopes(n_heads) -> (n_heads,)`` (or a factory ``make(expect)``
returning either). The expectation's ``alibi_bias_max`` and ``bias_symmetric`` are its rule, ``dtype`` the output's;
real code's own signatures (BLOOM's ``build_alibi_tensor``, MPT's ``build_alibi_bias``) reach it through adapters
(``implementations.adapters.hf_biases``)."""

from __future__ import annotations

import inspect

import numpy as np

from implementations.contract import Unsupported
from implementations.families.base import Bound, Form, Op, i64, register
from spec.tolerance import bias_class_name


def _takes(fn) -> int:
    """How many required positional arguments the function takes: 1 (slopes) or 3 (the bias)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 3
    return sum(1 for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


#: why the bias invariants are not about a slopes function
SLOPES_ONLY = "TARGET computes the slopes alone (slopes(n_heads)); the bias invariants are about alibi(n_heads, " \
              "q_positions, k_positions)"


def op_bias(host, fn, e, n_heads, q, k):
    """One call of one sequence: (n_heads, n_q, n_k); in the bhqk layout, a batch of one row."""
    if host.shape.layout == "bhqk":
        return op_batch(host, fn, e, n_heads, q[None], k[None])[0]
    if _takes(fn) == 1:
        raise Unsupported(SLOPES_ONLY)
    out = host.call("alibi(n_heads, q_positions, k_positions)", fn, int(n_heads), host.native_positions(q, e),
                    host.native_positions(k, e))
    return host.rows(out, e, (int(n_heads), len(q), len(k)))


def op_batch(host, fn, e, n_heads, q, k):
    """The bhqk layout's call: q_positions (batch, n_q), k_positions (batch, n_k) -> (batch, n_heads, n_q, n_k)."""
    if _takes(fn) == 1:
        raise Unsupported(SLOPES_ONLY)
    if host.shape.layout != "bhqk":
        raise Unsupported("a batched bias is the bhqk layout's call (--layout bhqk); this one takes one sequence")
    out = host.call("alibi(n_heads, q_positions, k_positions)", fn, int(n_heads), host.native_positions(q, e),
                    host.native_positions(k, e))
    return host.rows(out, e, (len(q), int(n_heads), q.shape[1], k.shape[1]))


def op_slopes(host, fn, e, n_heads):
    """The slopes: slopes(n_heads), or read off the bias of query 1 on keys 0 and 1 (b(1, 1) - b(1, 0) = m_h in both
    the causal and the symmetric form, and in BLOOM's m_h j)."""
    if _takes(fn) == 1:
        return host.rows(host.call("slopes(n_heads)", fn, int(n_heads)), e, (int(n_heads),))
    b = op_bias(host, fn, e, n_heads, np.array([1]), np.array([0, 1]))
    return b[:, 0, 1] - b[:, 0, 0]


def op_kind(host, fn, e) -> str:
    return "slopes" if _takes(fn) == 1 else "bias"


class AlibiBound(Bound):
    def kind(self) -> str:
        """"slopes" for slopes(n_heads), "bias" for alibi(n_heads, q_positions, k_positions)."""
        return self._op("kind")

    def bias(self, n_heads: int, q: np.ndarray, k: np.ndarray) -> np.ndarray:
        """alibi(n_heads, q_positions, k_positions) as float64 (n_heads, n_q, n_k); Unsupported for a slopes function."""
        return self._op("bias", int(n_heads), i64(q), i64(k))

    def batch(self, n_heads: int, q: np.ndarray, k: np.ndarray) -> np.ndarray:
        """The bhqk layout's call, q (batch, n_q) and k (batch, n_k), as float64 (batch, n_heads, n_q, n_k)."""
        return self._op("batch", int(n_heads), i64(q), i64(k))

    def slopes(self, n_heads: int) -> np.ndarray:
        """The slopes (n_heads,): the function's own, or read off its bias."""
        return self._op("slopes", int(n_heads))


def _plain(obj) -> bool:
    """slopes(n_heads): one argument, as a factory's make(expect), told apart by its name."""
    try:
        first = next(iter(inspect.signature(obj).parameters))
    except (TypeError, ValueError, StopIteration):
        return False
    return first.lower() in ("n_heads", "num_heads", "heads", "n", "nheads", "n_head")


def _describe(e) -> str:
    form = "symmetric -m_h |i - j|" if e.bias_symmetric else "causal -m_h (i - j)"
    return f"ALiBi {form}, slopes of bias max {e.alibi_bias_max:g}, {e.dtype}, positions below {e.max_position}"


ALIBI = Form("alibi", "apply", ((1, 3), "(n_heads, q_positions, k_positions) or (n_heads)"), ("alibi.*",),
             {"bias": Op(op_bias, "alibi(n_heads, q_positions, k_positions)"),
              "batch": Op(op_batch, "alibi(n_heads, q_positions, k_positions), batched"), "slopes": Op(op_slopes, "its slopes"),
              "kind": Op(op_kind, "what it computes")},
             lambda host, fn, e: op_slopes(host, fn, e, 2), AlibiBound, plain_if=_plain, describe_expect=_describe,
             class_name=bias_class_name, layouts=("nd", "bhqk"), layouts_of="ALiBi bias functions",
             expect_fields=("dtype", "max_position", "angle_dtype", "inv_freq_dtype", "alibi_bias_max", "bias_symmetric"))
register(ALIBI)
