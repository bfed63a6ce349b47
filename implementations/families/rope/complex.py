"""The complex form: ``apply_rotary_emb(xq, xk, freqs_cis) -> (xq_out, xk_out)`` as Meta's Llama and DeepSeek's
reference code write it (and transformers' llama4 and deepseek_v2 keep it), or DeepSeek-V3's one-tensor
``apply_rotary_emb(x, freqs_cis)``: each pair read as one complex number and multiplied by freqs_cis = cos + i sin.

* q and k are (batch, seq, heads, head_dim), Meta's layout (the default, ``--layout bshd``), or (batch, heads, seq,
  head_dim) as transformers' deepseek_v2 takes them (``--layout bhsd``);
* freqs_cis is complex64 (complex128 for float64), one value per pair: (seq, rotary_dim/2), one table every batch row
  shares, as Meta's code takes it (``apply.table = "seq"``, the default: called once per batch row, so that each row
  is at its own positions), or (batch, seq, rotary_dim/2), a table per batch row (``apply.table = "batch"``, as
  transformers' llama4 and deepseek_v2 broadcast it).

Which dims form a pair is the expectation's convention: Meta's and DeepSeek's code pair neighbours (interleaved).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from ropespec.implementations import arrays
from ropespec.implementations.contract import Fault, Unsupported
from ropespec.implementations.families.rope.backward import _autograd, _backward, _grad_of, _leaves
from ropespec.implementations.families.rope.kernel import native_shaped
from ropespec.spec import layouts
from ropespec.spec.expectation import Expect

#: how a complex-form function takes its table (``apply.table``): shared by every batch row, or one per batch row
FREQS_SHAPES = {"seq": "(seq, rotary_dim/2), one table every batch row shares (Meta's)",
                "batch": "(batch, seq, rotary_dim/2), one table per batch row (transformers' llama4 and deepseek_v2)"}


def _freqs_shape(fn) -> str:
    shape = getattr(fn, "table", "seq")
    if shape not in FREQS_SHAPES:
        raise Fault(f"declares table = {shape!r}; a complex-form function takes freqs_cis per 'seq' (the default) or "
                    f"per 'batch'", "shape")
    return shape


def _one_x(fn) -> bool:
    """apply(x, freqs_cis), DeepSeek-V3's: q and k are rotated by two calls."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return sum(1 for p in sig.parameters.values()
               if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)) == 2


def _perm(layout: str) -> tuple[int, ...]:
    """The transpose taking the qk form's (batch, heads, seq, d) to the axes of a batched layout (the call shape's
    ``own_layout``)."""
    return tuple((0, 2, 1, 3)[i] for i in layouts.get(layout).axes)


def _laid(v: np.ndarray, perm: tuple[int, ...], back: bool = False) -> np.ndarray:
    return v.transpose(np.argsort(perm) if back else perm)


def _call(host, fn, xq, xk, freqs):
    """(xq_out, xk_out) of one call, or of two calls for the one-tensor form."""
    if _one_x(fn):
        return (host.call("apply(x, freqs_cis)", fn, xq, freqs), host.call("apply(x, freqs_cis)", fn, xk, freqs))
    out = host.call("apply(xq, xk, freqs_cis)", fn, xq, xk, freqs)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"returned {type(out).__name__}, expected a pair (xq_out, xk_out)", "shape")
    return out


def _calls(host, fn, e: Expect, q, k, cos, sin):
    """Every call's (batch rows, q and k in the function's layout, its freqs_cis): one call per batch row for a
    shared table, one call otherwise."""
    if host.array == "list":
        raise Unsupported("the complex form takes 4-d numpy arrays, torch tensors or jax arrays, not nested lists")
    shared, perm = _freqs_shape(fn) == "seq", _perm(host.shape.own_layout)
    for rows in ([slice(i, i + 1) for i in range(len(q))] if shared else [slice(None)]):
        freqs = arrays.complex_native(cos[rows], sin[rows], host.array, e.dtype, host.device)
        yield rows, [_laid(v[rows], perm) for v in (q, k)], freqs[0] if shared else freqs


def op_complex(host, fn, e: Expect, q, k, cos, sin):
    """apply(xq, xk, freqs_cis) on q (b, h_q, s, d) and k (b, h_kv, s, d) with cos and sin per pair (b, s, r/2), laid
    out as the function takes them: (q_embed, k_embed) as float64 in the qk form's axes."""
    perm = _perm(host.shape.own_layout)
    got = ([], [])
    for _, laid, freqs in _calls(host, fn, e, q, k, cos, sin):
        native = [native_shaped(host, v, e) for v in laid]
        for out, v, acc in zip(_call(host, fn, *native, freqs), laid, got):
            acc.append(_laid(host.rows(out, e, v.shape), perm, back=True))
    return np.concatenate(got[0]), np.concatenate(got[1])


def op_complex_grad(host, fn, e: Expect, q, k, cos, sin, gq, gk):
    """d<gq, q_embed> + <gk, k_embed> by q and by k, through apply(xq, xk, freqs_cis)'s autograd."""
    torch = _autograd(host)
    dtype, perm = getattr(torch, e.dtype), _perm(host.shape.own_layout)
    grads = ([], [])
    for rows, laid, freqs in _calls(host, fn, e, q, k, cos, sin):
        leaves, inputs = _leaves(torch, host, e, laid)
        out = _call(host, fn, *inputs, freqs)
        upstream = [torch.tensor(np.ascontiguousarray(_laid(g[rows], perm)), dtype=dtype, device=host.device)
                    for g in (gq, gk)]
        _backward(torch, list(out), upstream)
        for leaf, acc in zip(leaves, grads):
            acc.append(_laid(_grad_of(leaf), perm, back=True))
    return np.concatenate(grads[0]), np.concatenate(grads[1])


def warm_complex(host, fn, e: Expect) -> None:
    x, half = np.full((1, 1, 2, e.head_dim), 0.5), np.full((1, 2, e.rotary_dim // 2), 0.5)
    op_complex(host, fn, e, x, x, half, half)


def piped(kernel: Callable, table: Callable, layout: str) -> Callable:
    """f(x, positions) of a complex-form function and its library's table(positions) -> freqs_cis (n, rotary_dim/2):
    x as one head of one batch row, laid out as the function takes it."""
    perm, shared = _perm(layout), getattr(kernel, "table", "seq") == "seq"

    def apply(x, positions):
        n, d = x.shape
        q = x.reshape(tuple((1, 1, n, d)[i] for i in perm))
        freqs = table(positions)
        freqs = freqs if shared else freqs[None]
        out = kernel(q, freqs) if _one_x(kernel) else kernel(q, q, freqs)[0]
        return out.reshape(n, d)

    return apply
