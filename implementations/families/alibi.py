"""The ALiBi family: ``alibi(n_heads, q_positions, k_positions) -> bias (n_heads, n_q, n_k)``, the bias added to the
attention scores of each head (in the bhqk layout, positions (batch, n) and the bias (batch, n_heads, n_q, n_k)), or
the slopes alone, ``slopes(n_heads) -> (n_heads,)``, or real code's own signatures: BLOOM's
``build_alibi_tensor(attention_mask, num_heads, dtype)`` (called with a left-padded mask, one sequence or a batch)
and MPT's ``build_mpt_alibi_tensor(num_heads, sequence_length, alibi_bias_max)`` (llm-foundry's
``build_alibi_bias(n_heads, seq_len, ...)``), told apart by their parameters' names; or a factory ``make(expect)``
returning any of them. The expectation's ``alibi_bias_max`` and ``bias_symmetric`` are its rule, ``dtype`` the
output's."""

from __future__ import annotations

import inspect

import numpy as np

from ropespec.implementations import arrays
from ropespec.implementations.contract import CONTRACT_SHAPE, Fault, Unsupported
from ropespec.implementations.families.base import Bound, Form, Op, i64, register


def _params(fn) -> list:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []


#: the first parameter of BLOOM's build_alibi_tensor(attention_mask, num_heads, dtype), and the second of MPT's
#: build_mpt_alibi_tensor(num_heads, sequence_length, alibi_bias_max=8, ...) (llm-foundry's build_alibi_bias(n_heads,
#: seq_len, ...)): the signatures of real code, told from alibi(n_heads, q_positions, k_positions) by these names
MASK_NAMES = ("attention_mask", "mask")
LENGTH_NAMES = ("sequence_length", "seq_len", "seq_length", "key_length", "length")
#: what each kind of TARGET computes, as a message says its call
CALLS = {"bias": "alibi(n_heads, q_positions, k_positions)", "slopes": "slopes(n_heads)",
         "mask": "build_alibi_tensor(attention_mask, num_heads, dtype)",
         "length": "build_alibi_bias(n_heads, sequence_length, alibi_bias_max)"}


def kind_of(fn) -> str:
    """Which signature TARGET has (a key of :data:`CALLS`): BLOOM's mask form or MPT's length form by their
    parameters' names, the slopes by one required argument, else the bias of given positions."""
    params = _params(fn)
    names = [p.name.lower() for p in params]
    if names and names[0] in MASK_NAMES:
        return "mask"
    if len(names) > 1 and names[1] in LENGTH_NAMES:
        return "length"
    required = sum(1 for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return "slopes" if params and required == 1 else "bias"


#: why the bias invariants are not about a slopes function
SLOPES_ONLY = "TARGET computes the slopes alone (slopes(n_heads)); the bias invariants are about alibi(n_heads, " \
              "q_positions, k_positions)"


def op_bias(host, fn, e, n_heads, q, k):
    """One call of one sequence: (n_heads, n_q, n_k); in the bhqk layout, a batch of one row."""
    kind = kind_of(fn)
    if kind == "slopes":
        raise Unsupported(SLOPES_ONLY)
    if kind == "length":  # one sequence in any layout
        return _by_length(host, fn, e, n_heads, q, k)
    if host.shape.laid_out.bias or kind == "mask":
        return op_batch(host, fn, e, n_heads, q[None], k[None], batched=False)[0]
    out = host.call(CALLS["bias"], fn, int(n_heads), host.native_positions(q, e), host.native_positions(k, e))
    return host.rows(out, e, (int(n_heads), len(q), len(k)))


def op_batch(host, fn, e, n_heads, q, k, batched: bool = True):
    """The bhqk layout's call: q_positions (batch, n_q), k_positions (batch, n_k) -> (batch, n_heads, n_q, n_k)."""
    kind = kind_of(fn)
    if kind == "slopes":
        raise Unsupported(SLOPES_ONLY)
    if batched and not host.shape.laid_out.bias:
        raise Unsupported("a batched bias is the bhqk layout's call (--layout bhqk); this one takes one sequence")
    if kind == "mask":
        return _by_mask(host, fn, e, n_heads, q, k)
    if kind == "length":
        raise Unsupported(f"{CALLS['length']} builds one sequence's bias (no batch, no mask): no batched call")
    out = host.call(CALLS["bias"], fn, int(n_heads), host.native_positions(q, e), host.native_positions(k, e))
    return host.rows(out, e, (len(q), int(n_heads), q.shape[1], k.shape[1]))


def _dtype(host, e):
    """The expectation's dtype as the TARGET's array library names it (torch.bfloat16, numpy.float32, ...)."""
    if host.array == "torch":
        return getattr(arrays.torch_module(), e.dtype)
    if host.array == "jax":
        return getattr(arrays.jax_module().numpy, e.dtype)
    return np.dtype(e.dtype)


def _by_mask(host, fn, e, n_heads, q, k):
    """BLOOM's call, as its model makes it: an attention mask (batch, T) with each row left-padded so that its last
    real token is at the row's largest position (its real tokens at 0, 1, ..., as the mask's cumulative sum counts
    them), the result (batch x n_heads, 1, T) read as BLOOM's attention reads it, (batch, n_heads, T), one bias per
    key handed to every query (softmax's row shift does the rest)."""
    b, h = len(q), int(n_heads)
    lengths = np.maximum(q.max(axis=1), k.max(axis=1)) + 1
    total = int(lengths.max())
    pads = total - lengths
    mask = (np.arange(total)[None, :] >= pads[:, None]).astype(np.int64)  # left padding: zeros, then the real tokens
    out = host.call(CALLS["mask"], fn, host.native_positions(mask, e), h, _dtype(host, e))
    at = k + pads[:, None]  # each key's index in its row of the mask
    per_key = _columns(host, e, out, (b * h, 1, total), at).reshape(b, h, -1)
    got = np.take_along_axis(per_key, np.searchsorted(np.unique(at), at)[:, None, :], axis=2)
    return np.broadcast_to(got[:, :, None, :], (b, h, q.shape[1], k.shape[1])).copy()


def _columns(host, e, out, shape: tuple[int, ...], at: np.ndarray) -> np.ndarray:
    """The result's entries at the last-axis indices ``at`` (each once, ascending), as float64, after its shape is
    checked: only the keys asked for are converted, not a whole sequence's bias (BLOOM's at 2^17 positions and 112
    heads is 58 MB)."""
    got = tuple(getattr(out, "shape", np.shape(out)))
    if got != shape:
        raise Fault(f"returned shape {got}, expected {shape}", "shape", cause=CONTRACT_SHAPE)
    cols = np.unique(at)
    native = np.asarray(out) if host.array == "list" else out
    return host.rows(native[..., host.native_positions(cols, e)], e, shape[:-1] + (len(cols),))


def _by_length(host, fn, e, n_heads, q, k):
    """MPT's call: one bias per key of a sequence long enough for every position, slope x (j - L + 1) (MPT's, from
    the end), with the expectation's alibi_bias_max where the function takes one; (n_heads, 1, L) or (1, n_heads,
    1, L) as MPT's and llm-foundry's return, every query handed the keys' entries."""
    h, length = int(n_heads), int(max(q.max(), k.max())) + 1
    keywords = {"alibi_bias_max": e.params("alibi").alibi_bias_max} if any(p.name == "alibi_bias_max" for p in _params(fn)) else {}
    out = host.call(CALLS["length"], lambda: fn(h, length, **keywords))
    shape = tuple(getattr(out, "shape", np.shape(out)))
    if shape not in ((h, 1, length), (1, h, 1, length)):
        raise Fault(f"{CALLS['length']}: returned shape {shape}, expected (n_heads, 1, {length}) or (1, n_heads, 1, "
                    f"{length})", "shape", cause=CONTRACT_SHAPE)
    per_key = _columns(host, e, out, shape, k).reshape(h, -1)[:, np.searchsorted(np.unique(k), k)]
    return np.broadcast_to(per_key[:, None, :], (h, len(q), len(k))).copy()


def op_slopes(host, fn, e, n_heads):
    """The slopes: slopes(n_heads), or read off the bias of query 1 on keys 0 and 1 (b(1, 1) - b(1, 0) = m_h in both
    the causal and the symmetric form, and in BLOOM's m_h j)."""
    if kind_of(fn) == "slopes":
        return host.rows(host.call(CALLS["slopes"], fn, int(n_heads)), e, (int(n_heads),))
    b = op_bias(host, fn, e, n_heads, np.array([1]), np.array([0, 1]))
    return b[:, 0, 1] - b[:, 0, 0]


def op_kind(host, fn, e) -> str:
    return "slopes" if kind_of(fn) == "slopes" else "bias"


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
    """slopes(n_heads), or BLOOM's build_alibi_tensor(attention_mask, ...): a first parameter a factory's make(expect)
    does not have, told apart by its name."""
    params = _params(obj)
    return bool(params) and params[0].name.lower() in ("n_heads", "num_heads", "heads", "n", "nheads", "n_head",
                                                        *MASK_NAMES)


def _queries_and_keys(shape, n_heads, q, k):
    return [q, k]


ALIBI = Form("alibi", "apply", ((1, 2, 3), "(n_heads, q_positions, k_positions), (n_heads), (attention_mask, "
                                          "num_heads, dtype) or (n_heads, sequence_length)"), ("alibi.*",),
             {"bias": Op(op_bias, "alibi(n_heads, q_positions, k_positions)", _queries_and_keys),
              "batch": Op(op_batch, "alibi(n_heads, q_positions, k_positions), batched", _queries_and_keys),
              "slopes": Op(op_slopes, "its slopes"),
              "kind": Op(op_kind, "what it computes")},
             lambda host, fn, e: op_slopes(host, fn, e, 2), AlibiBound, plain_if=_plain,
             layouts=("nd", "bhqk"), layouts_of="ALiBi bias functions")
register(ALIBI)
