"""Backward passes across the process boundary: d<g, f(x)>/dx through the implementation's own autograd (torch
autograd in every layout and in place, jax.vjp in the nd layout), for the apply, kernel and qk forms."""

from __future__ import annotations


import numpy as np

from ropespec.implementations import arrays
from ropespec.implementations.contract import Fault
from ropespec.implementations.families.rope.apply import pad_rows
from ropespec.implementations.families.rope.kernel import kernel_table, qk_table
from ropespec.spec.expectation import Expect


# -- backward passes: d<g, f(x)>/dx through the implementation's own autograd ------------------------------------
def _autograd(host):
    """torch, for a torch implementation; NotImplementedError (the implementation's as a whole) otherwise."""
    torch = arrays.torch_module()
    if torch is None or host.array != "torch":
        raise NotImplementedError("autograd is checked for torch implementations (--array torch) and jax ones in the "
                                  "nd layout (--array jax)")
    return torch


def _backward(torch, outs, grads) -> None:
    if not all(isinstance(o, torch.Tensor) and o.requires_grad for o in outs):
        raise NotImplementedError("the implementation does not support autograd (its output has no grad_fn)")
    try:
        torch.autograd.backward(outs, grads)
    except Exception as err:
        raise Fault(f"backward raised {type(err).__name__}: {err}", "exception") from None


def _leaves(torch, host, e: Expect, values):
    """Tensors requiring grad in the implementation's dtype and device, and what the call is handed: the leaves
    themselves, or for an in-place function copies of them (it writes into those, and autograd records it)."""
    dtype = getattr(torch, e.dtype)
    leaves = [torch.tensor(np.ascontiguousarray(v), dtype=dtype, device=host.device, requires_grad=True)
              for v in values]
    return leaves, [t.clone() for t in leaves] if host.shape.inplace else leaves


def _grad_of(leaf) -> np.ndarray:
    if leaf.grad is None:
        raise NotImplementedError("the implementation does not support autograd (no gradient reached x)")
    return leaf.grad.detach().to("cpu").double().numpy()


def op_grad(host, fn, e: Expect, x, positions, g, cu_seqlens=None, key=None, g_key=None):
    """d<g, f(x, p)>/dx through the implementation's autograd, in every layout and in place: x (and g) in canonical
    axes, (n, d) for nd, (batch, seq, head, dim) for the batched layouts, (tokens, head, dim) for thd and vllm (whose
    key and g_key are k and its upstream gradient). Returns [dx] (and dk for vllm) in canonical axes, float64;
    NotImplementedError where the implementation has no autograd."""
    layout = host.shape.laid_out
    if host.array == "jax":
        return [_jax_grad(host, fn, e, x, positions, g)]
    torch = _autograd(host)
    perm = layout.axes

    def there(v):  # canonical -> the layout's own axes
        v = np.asarray(v, dtype=np.float64)
        if perm is not None:
            v = v.transpose(perm)
        return v.reshape(len(v), -1) if layout.keys_apart else v

    def back(v, like):  # the layout's axes -> canonical
        v = v.reshape(like.shape if perm is None else tuple(like.shape[i] for i in perm))
        return v.transpose(np.argsort(perm)) if perm is not None else v

    xs = [x] + ([key] if layout.keys_apart else [])
    gs = [g] + ([g_key] if layout.keys_apart else [])
    leaves, inputs = _leaves(torch, host, e, [there(v) for v in xs])
    pos = torch.tensor(np.asarray(positions), device=host.device)
    if layout.keys_apart:
        out = host.call("forward(positions, query, key)", fn, pos, *inputs)
    elif layout.packed:
        cu = torch.tensor(np.asarray(cu_seqlens), device=host.device)
        out = host.call("f(x, positions, cu_seqlens=...)", lambda: fn(inputs[0], pos, cu_seqlens=cu))
    else:
        out = host.call("f(x, positions)", fn, inputs[0], pos)
    returned = list(out) if layout.keys_apart and isinstance(out, (tuple, list)) else [out]
    if host.shape.inplace and not all(isinstance(o, torch.Tensor) and o.requires_grad for o in returned):
        returned = inputs  # an in-place function that returns nothing: autograd recorded its writes into the copies
    outs = returned
    if len(outs) != len(gs):
        raise Fault(f"returned {type(out).__name__}, expected {len(gs)} tensors", "shape")
    dtype = getattr(torch, e.dtype)
    _backward(torch, outs, [torch.tensor(np.ascontiguousarray(there(v)), dtype=dtype, device=host.device) for v in gs])
    return [back(_grad_of(leaf), v) for leaf, v in zip(leaves, xs)]


def _jax_grad(host, fn, e: Expect, x, positions, g):
    """jax.vjp of f(x, p) at x, applied to g (the nd layout, out of place)."""
    jax = arrays.jax_module()
    if jax is None or not host.shape.laid_out.plain or host.shape.inplace:
        raise NotImplementedError("autograd of jax implementations is checked in the nd layout (jax.vjp)")
    n = np.shape(x)[0]
    x, positions, g, _ = pad_rows(host, e, x, positions, g)
    nx, npos = host.native(x, positions, e)
    try:
        out, vjp = jax.vjp(lambda v: fn(v, npos), nx)
        (dx,) = vjp(jax.numpy.asarray(g, dtype=out.dtype))
    except Exception as err:
        raise NotImplementedError(f"jax.vjp of the implementation failed ({type(err).__name__}: {err})") from None
    return np.asarray(dx, dtype=np.float64)[:n]


def op_kernel_grad(host, fn, e: Expect, x, cos, sin, g):
    """d<g, kernel(x, cos, sin)>/dx, the table given as op_kernel hands it over."""
    torch = _autograd(host)
    cos, sin = kernel_table(fn, e, cos, sin, "a kernel")
    dtype = getattr(torch, e.dtype)
    leaves, inputs = _leaves(torch, host, e, [x])
    c, s = (torch.tensor(t, dtype=dtype, device=host.device) for t in (cos, sin))
    out = host.call("kernel(x, cos, sin)", fn, inputs[0], c, s)
    _backward(torch, [out], [torch.tensor(g, dtype=dtype, device=host.device)])
    return _grad_of(leaves[0])


def op_qk_grad(host, fn, e: Expect, q, k, cos, sin, gq, gk):
    """d<gq, q_embed> + <gk, k_embed> by q and by k, through apply(q, k, cos, sin)."""
    torch = _autograd(host)
    cos, sin = qk_table(fn, e, cos, sin)
    dtype = getattr(torch, e.dtype)
    leaves, inputs = _leaves(torch, host, e, [q, k])
    c, s = (torch.tensor(t, dtype=dtype, device=host.device) for t in (cos, sin))
    out = host.call("apply(q, k, cos, sin)", fn, *inputs, c, s)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"returned {type(out).__name__}, expected a pair (q_embed, k_embed)", "shape")
    _backward(torch, list(out), [torch.tensor(v, dtype=dtype, device=host.device) for v in (gq, gk)])
    return _grad_of(leaves[0]), _grad_of(leaves[1])
