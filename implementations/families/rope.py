"""The rope family's forms: apply (in every layout), vLLM's forward, the table builder, the kernel and qk functions,
and a decoder (prefill/step) of the apply form.

* apply: ``f(x, positions)``, x (n, head_dim); in a batched layout ``f(x, positions)`` with x (batch, seq, heads, d)
  in that layout's axis order, or packed ``f(x, offsets, cu_seqlens=...)`` (thd);
* vllm: ``forward(positions, query, key) -> (query, key)``, heads flattened;
* table: ``table(positions) -> (cos, sin)``, per pair (n, rotary_dim/2) or per dim (n, rotary_dim);
* kernel: ``kernel(x, cos, sin)``, the table handed over per dim (default) or per pair (``kernel.table = "pair"``);
* qk: transformers' ``apply(q, k, cos, sin) -> (q_embed, k_embed)``, q (b, h_q, s, d), k (b, h_kv, s, d);
* a kernel or qk function and its library's table (``--table``): checked as one apply function.
"""

from __future__ import annotations

import inspect
import math
from typing import Callable

import numpy as np

from ropespec.implementations import arrays
from ropespec.implementations.contract import CONTRACT_SHAPE, Call, Fault, Keys, TargetError, Unsupported
from ropespec.implementations.families.base import Bound, Form, Op, f64, i64, register
from ropespec.spec.angles import rounded_table
from ropespec.spec.definitions import rotate, token_positions
from ropespec.spec.expectation import Expect
from ropespec.spec.tables import table_variant

#: how a kernel takes its table (``kernel.table``, default "dim"): one cos and one sin per pair, shape
#: (n, rotary_dim/2), or per dim, shape (n, rotary_dim), both dims of pair i holding its value, in the
#: layout the convention writes (transformers' cat([freqs, freqs]) for "half")
TABLE_SHAPES = ("dim", "pair")


# -- apply, in every layout, and vLLM's forward ------------------------------------------------------------------
def op_call(host, fn, e: Expect, x, positions):
    """f(x, positions): (float64 result, the dtype returned, which argument it wrote into). In another layout the rows
    are one sequence of one head (thd: n sequences of one token, at offsets ``positions``); an in-place function's
    result is x after the call."""
    layout = host.shape.laid_out
    if not layout.plain:
        n, d = np.shape(x)
        x = f64(x)
        if layout.packed:
            if e.multi_axis:
                raise Unsupported("the thd layout packs sequences of 1-D positions (offsets); a multi-axis RoPE is "
                                  "checked in the nd and batched layouts")
            got = op_layout(host, fn, e, x.reshape(n, 1, d), positions, np.arange(n + 1))
        elif layout.keys_apart:
            got = op_layout(host, fn, e, x.reshape(n, 1, d), positions, key=x.reshape(n, 1, d))
        else:
            got = op_layout(host, fn, e, x.reshape(1, n, 1, d), np.reshape(positions, (1,) + np.shape(positions)))
        if got["outside"]:
            raise Fault(got["outside"], "input-mutated")
        return got["out"].reshape(n, d), got["dtype"], got["mutated"]
    n = np.shape(x)[0]
    x, positions, pad = _padded(host, e, x, positions)
    nx, npos = host.native(x, positions, e)
    keep_x, keep_p = arrays.snapshot(nx, host.array), arrays.snapshot(npos, host.array)
    out = host.call("f(x, positions)", fn, nx, npos)
    mutated = None
    if host.shape.inplace:
        out = nx
    elif not arrays.same(nx, keep_x, host.array):
        mutated = "x"
    if mutated is None and not arrays.same(npos, keep_p, host.array):
        mutated = "positions"
    return (host.rows(out, e, tuple(np.shape(x)), rows=np.arange(n) if pad else None),
            arrays.native_dtype(out, host.array), mutated)


#: the fewest rows a padded call has, and up to how many rows the lengths go by factors of 8 (8, 64: the many short
#: calls, a few shapes); beyond it by factors of 2, where a long call's rows cost more than a compilation
#: (:func:`_padding`)
BUCKET_MIN, BUCKET_COARSE = 8, 64


def _padded(host, e: Expect, x, positions, g=None):
    """x and positions (and an upstream gradient g) with the rows :func:`_padding` adds: copies of the last row at its
    position (the rows a row-wise function returns are the same), g zero there (they add nothing to the gradient)."""
    pad = _padding(host, e, np.shape(x)[0])
    if not pad:
        return (x, positions, 0) if g is None else (x, positions, g, 0)
    more = lambda v: np.concatenate([v, np.repeat(np.asarray(v)[-1:], pad, axis=0)])
    if g is None:
        return more(x), more(positions), pad
    return more(x), more(positions), np.concatenate([g, np.zeros((pad,) + np.shape(g)[1:])]), pad


def _padding(host, e: Expect, n: int) -> int:
    """How many rows a call of n rows is padded with: a jax function is traced and compiled once per shape of its
    inputs, so every call of n rows is made a call of the next of a few lengths (:data:`BUCKET_MIN`,
    :data:`BUCKET_COARSE`), and a few shapes are compiled, not one per drawn length. Only where the expected table
    does not depend on the call's length (a dynamic or LongRoPE table may read it off the number of rows) and never
    for an in-place function, whose padded rows would be written to a copy."""
    if host.array != "jax" or n < 1 or host.shape.inplace or \
            table_variant(e, e.max_position) != table_variant(e, None):
        return 0
    bits = (n - 1).bit_length()
    return max(BUCKET_MIN, 1 << (3 * math.ceil(bits / 3) if n <= BUCKET_COARSE else bits)) - n


def op_layout(host, fn, e: Expect, x, positions, cu_seqlens=None, storage: str = "contiguous", key=None) -> dict:
    """One call in the implementation's layout with x in canonical axes, (batch, seq, head, dim), or (tokens, head,
    dim) for thd and vllm (whose ``key`` is (tokens, h_kv, dim)), stored as ``storage`` (:data:`arrays.STORAGES`).
    Returns {"out", "key" (vllm), "dtype", "mutated", "outside"}: the results in canonical axes as float64 (an
    in-place function's are its arguments after the call), which argument an out-of-place function wrote into, and
    what an in-place one wrote outside its views."""
    layout, inplace = host.shape.laid_out, host.shape.inplace
    if host.array == "list":
        raise Unsupported("the batched layouts take numpy arrays, torch or jax tensors, not nested lists")
    if inplace and host.array == "jax":
        raise Unsupported("jax arrays are immutable: nothing can be computed in place")
    perm = layout.axes or (0, 1, 2)
    values = [f64(x).transpose(perm)]
    names = ["x"]
    if layout.keys_apart:  # heads flattened: (tokens, heads * dim)
        values = [values[0].reshape(len(x), -1), f64(key).reshape(len(key), -1)]
        names = ["query", "key"]
    axis = perm.index(2) if layout.batched else 1
    try:
        views, buffer, regions = arrays.stored(values, host.array, e.dtype, host.device, storage, axis)
    except ValueError as err:
        raise Unsupported(str(err)) from None
    buffers = buffer if isinstance(buffer, list) else [buffer]
    before = [arrays.snapshot(b, host.array) for b in buffers]
    pos = host.native_positions(positions, e)
    cu = None if cu_seqlens is None else host.native_positions(cu_seqlens, e)
    ints = [(n, v, arrays.snapshot(v, host.array)) for n, v in (("positions", pos), ("cu_seqlens", cu)) if v is not None]
    if layout.keys_apart:
        out = host.call("forward(positions, query, key)", fn, pos, *views)
    elif layout.packed:
        out = host.call("f(x, positions, cu_seqlens=...)", lambda: fn(views[0], pos, cu_seqlens=cu))
    else:
        out = host.call(f"f(x, positions) ({layout.name})", fn, views[0], pos)
    got = {"mutated": None, "outside": None}
    if inplace:
        outs = views
        if regions is not None and arrays.written_outside(buffers[0], before[0], regions, host.array):
            got["outside"] = (f"the in-place call wrote outside its argument{'s' * (len(views) > 1)}: into the "
                              f"{'fused buffer' if storage == 'fused' else 'memory'} around "
                              f"{' and '.join(names)} ({storage} storage)")
    else:
        if layout.keys_apart:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise Fault(f"returned {type(out).__name__}, expected a pair (query, key)", "shape")
            outs = list(out)
        else:
            outs = [out]
        changed = [n for n, b, k in zip(names, buffers, before) if not arrays.same(b, k, host.array)]
        got["mutated"] = changed[0] if changed else None
    got["mutated"] = got["mutated"] or next((n for n, v, k in ints if not arrays.same(v, k, host.array)), None)
    inverse = np.argsort(perm)
    res = [host.rows(o, e, v.shape).reshape(v.shape) for o, v in zip(outs, values)]
    if layout.keys_apart:
        got["out"], got["key"] = (r.reshape(len(r), -1, e.head_dim) for r in res)
    else:
        got["out"] = res[0].transpose(inverse)
    got["dtype"] = arrays.native_dtype(outs[0], host.array)
    return got


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
    x, positions, g, _ = _padded(host, e, x, positions, g)
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
    cos, sin = _kernel_table(fn, e, cos, sin, "a kernel")
    dtype = getattr(torch, e.dtype)
    leaves, inputs = _leaves(torch, host, e, [x])
    c, s = (torch.tensor(t, dtype=dtype, device=host.device) for t in (cos, sin))
    out = host.call("kernel(x, cos, sin)", fn, inputs[0], c, s)
    _backward(torch, [out], [torch.tensor(g, dtype=dtype, device=host.device)])
    return _grad_of(leaves[0])


def op_qk_grad(host, fn, e: Expect, q, k, cos, sin, gq, gk):
    """d<gq, q_embed> + <gk, k_embed> by q and by k, through apply(q, k, cos, sin)."""
    torch = _autograd(host)
    cos, sin = _qk_table(fn, e, cos, sin)
    dtype = getattr(torch, e.dtype)
    leaves, inputs = _leaves(torch, host, e, [q, k])
    c, s = (torch.tensor(t, dtype=dtype, device=host.device) for t in (cos, sin))
    out = host.call("apply(q, k, cos, sin)", fn, *inputs, c, s)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"returned {type(out).__name__}, expected a pair (q_embed, k_embed)", "shape")
    _backward(torch, list(out), [torch.tensor(v, dtype=dtype, device=host.device) for v in (gq, gk)])
    return _grad_of(leaves[0]), _grad_of(leaves[1])


def _warm_apply(host, fn, e: Expect) -> None:
    op_call(host, fn, e, np.full((2, e.head_dim), 0.5), _two_rows(e))


def _two_rows(e: Expect) -> np.ndarray:
    """Positions 0 and 1 as e's rows: (2,), or (2, A) with every axis of row 1 at 1 (a multi-axis RoPE)."""
    return np.zeros(e.position_shape(2), dtype=np.int64) + np.arange(2).reshape((2,) + (1,) * e.multi_axis)


class RopeBound(Bound):
    """An apply function (any layout) or vLLM's forward, bound to one expectation."""

    def call(self, x: np.ndarray, positions: np.ndarray) -> Call:
        out, dtype, mutated = self._op("call", f64(x), i64(positions))
        return Call(out, dtype, mutated)

    def __call__(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return self.call(x, positions).out

    def layout(self, x: np.ndarray, positions: np.ndarray, cu_seqlens=None, storage: str = "contiguous",
               key: np.ndarray | None = None) -> dict:
        """One call in the implementation's layout with x in canonical axes (batch, seq, head, dim), or (tokens,
        head, dim) for thd and vllm, stored as ``storage`` (:func:`op_layout`)."""
        return self._op("layout", f64(x), i64(positions), None if cu_seqlens is None else i64(cu_seqlens), storage,
                        None if key is None else f64(key))

    def grad(self, x: np.ndarray, positions: np.ndarray, g: np.ndarray, cu_seqlens=None, key=None,
             g_key=None) -> list[np.ndarray]:
        """d<f(x, p), g>/dx through the implementation's autograd (torch, or jax.vjp), in its layout (x, g in canonical
        axes, as :meth:`layout` takes them; vllm's key and g_key too): [dx] (and dk); NotImplementedError when it
        has none."""
        return self._op("grad", f64(x), i64(positions), f64(g), None if cu_seqlens is None else i64(cu_seqlens),
                        None if key is None else f64(key), None if g_key is None else f64(g_key))


# -- a decoder of the apply form: prefill(x, positions) and step(x, position) ------------------------------------
def _some(out, rows, convert):
    """Every key (rows None), or only ``rows`` of them as :class:`Keys`; ``convert(out, rows)`` checks the whole
    result (kind, dtype, shape) and converts the rows asked for."""
    if rows is None:
        return convert(out, None)
    values = convert(out, rows)  # raises a Fault unless the shape is the one expected
    return Keys(len(out), rows, values)


def op_prefill(host, fn, e, x, positions, rows=None):
    nx, npos = host.native(x, positions, e)
    return _some(host.call("prefill", fn.prefill, nx, npos), rows,
                 lambda out, r: host.rows(out, e, (len(x), e.head_dim), r))


def op_step(host, fn, e, x, position, rows=None):
    nx, _ = host.native(x, np.array([position]), e)
    return _some(host.call("step", fn.step, nx, int(position)), rows,
                 lambda out, r: host.rows(out, e, (position + 1, e.head_dim), r))


class DecoderBound(Bound):
    """A decoder: prefill(x, positions) and step(x, position), each returning every key it attends over, rotated."""

    def prefill(self, x: np.ndarray, positions: np.ndarray, rows: np.ndarray | None = None):
        """The keys the decoder attends over after prefilling rows x at positions (with ``rows``: only those rows
        come back, as :class:`Keys`)."""
        return self._op("prefill", f64(x), i64(positions), None if rows is None else i64(rows))

    def step(self, x: np.ndarray, position: int, rows: np.ndarray | None = None):
        """The keys after one more row x (shape (1, head_dim)) at ``position`` (with ``rows``: only those rows come
        back, as :class:`Keys`: a decoder returns every key at every step, and all of them across the process
        boundary made a 4096-token decode cost O(n^2) bytes)."""
        return self._op("step", f64(x), int(position), None if rows is None else i64(rows))


# -- the table builder ------------------------------------------------------------------------------------------
def _per_dim(table: np.ndarray, oa, ob, r: int) -> np.ndarray:
    """A per-pair table (n, r/2) spread onto (n, r): pair i's value at both of its output dims."""
    out = np.empty((len(table), r))
    out[:, oa], out[:, ob] = table, table
    return out


def op_table(host, fn, e: Expect, positions):
    """table(positions) -> (cos, sin): each (n, rotary_dim/2), one value per pair, or (n, rotary_dim), one per dim,
    whose two dims of every pair must agree bit for bit; handed back per pair as float64."""
    out = host.call("table(positions)", fn, host.native_positions(positions, e))
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"returned {type(out).__name__}, expected a pair (cos, sin)", "shape")
    n, k = len(positions), e.rotary_dim // 2
    got = []
    for name, t in zip(("cos", "sin"), out):
        shape = tuple(np.shape(t))
        if shape not in ((n, k), (n, 2 * k)):
            raise Fault(f"returned {name} of shape {shape}, expected ({n}, {k}) (one value per pair) or "
                        f"({n}, {2 * k}) (one per dim)", "shape", cause=CONTRACT_SHAPE)
        got.append(host.rows(t, e, shape))
    if got[0].shape != got[1].shape:
        raise Fault(f"returned cos of shape {got[0].shape} and sin of shape {got[1].shape}", "shape")
    if got[0].shape[1] == 2 * k:
        _, _, oa, ob = e.pair_index()
        for name, t in zip(("cos", "sin"), got):
            differ = np.flatnonzero((t[:, oa] != t[:, ob]).any(axis=0))
            if differ.size:
                i = int(differ[0])
                raise Fault(f"the two dims of pair {i} in the per-dim {name} table differ ({t[:, oa][:, i].tolist()[:3]} "
                            f"vs {t[:, ob][:, i].tolist()[:3]}): one value per pair must be duplicated bit for bit "
                            f"where the {e.convention} convention writes the pair", "layout")
        got = [t[:, oa] for t in got]
    return got[0], got[1]


class TableBound(Bound):
    def table(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """table(positions) -> (cos, sin), each (n, rotary_dim/2) float64, one value per pair (a per-dim table is
        checked for its duplicated dims and reduced in the worker)."""
        return self._op("table", i64(positions))

    def rotate_by_table(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The RoPE the table defines, f(x, p) = R(table(p)) x (ropespec.spec.definitions.rotate in float64): what the
        diagnoses, the fingerprint and the precision sweep measure."""
        c, s = self.table(positions)
        a, b, oa, ob = self.expect.pair_index()
        x = f64(x)
        out = x.copy()
        out[:, oa], out[:, ob] = rotate(x[:, a], x[:, b], c, s)
        return out


def _table_is_plain(obj: Callable) -> bool:
    """table(positions): one argument, as a factory's, told apart by its name."""
    try:
        first = next(iter(inspect.signature(obj).parameters))
    except (TypeError, ValueError, StopIteration):
        return False
    return first.lower().startswith("position")


# -- kernels: kernel(x, cos, sin) and transformers' apply(q, k, cos, sin) ----------------------------------------
def _table_shape(fn, what: str) -> str:
    shape = getattr(fn, "table", "dim")
    if shape not in TABLE_SHAPES:
        raise Fault(f"declares table = {shape!r}; {what} takes its cos/sin per 'dim' (the default) or per 'pair'",
                    "shape")
    return shape


def _kernel_table(fn, e: Expect, cos, sin, what: str):
    """A per-pair table (n, rotary_dim/2) as the kernel takes it: as it is, or spread per dim (``kernel.table``)."""
    if _table_shape(fn, what) == "dim":
        _, _, oa, ob = e.pair_index()
        cos, sin = (_per_dim(t, oa, ob, e.rotary_dim) for t in (cos, sin))
    return cos, sin


def _qk_table(fn, e: Expect, cos, sin):
    """A per-pair table (b, s, rotary_dim/2) as transformers' apply takes it: per dim, or per pair (``table``)."""
    if _table_shape(fn, "apply") == "dim":
        _, _, oa, ob = e.pair_index()
        b, s_ = cos.shape[:2]
        cos, sin = (_per_dim(t.reshape(b * s_, -1), oa, ob, e.rotary_dim).reshape(b, s_, -1) for t in (cos, sin))
    return cos, sin


def op_kernel(host, fn, e: Expect, x, cos, sin):
    """kernel(x, cos, sin) with the table per pair (n, rotary_dim/2) as given, or spread per dim as the kernel
    declares (``kernel.table``): (float64 result, which argument it wrote into)."""
    cos, sin = _kernel_table(fn, e, cos, sin, "a kernel")
    zeros = np.zeros(len(x), dtype=np.int64)
    nx, nc, ns = (host.native(v, zeros, e)[0] for v in (x, cos, sin))
    keep = [arrays.snapshot(v, host.array) for v in (nx, nc, ns)]
    out = host.call("kernel(x, cos, sin)", fn, nx, nc, ns)
    mutated = next((name for name, v, k in zip(("x", "cos", "sin"), (nx, nc, ns), keep)
                    if not arrays.same(v, k, host.array)), None)
    return host.rows(out, e, tuple(np.shape(x))), mutated


def op_qk(host, fn, e: Expect, q, k, cos, sin):
    """apply(q, k, cos, sin) as transformers calls it: q (b, h_q, s, d), k (b, h_kv, s, d), cos and sin given per
    pair (b, s, rotary_dim/2) and handed over per dim (b, s, rotary_dim), or per pair when the function says
    ``table = "pair"`` (GPT-OSS): (q_embed, k_embed) as float64."""
    cos, sin = _qk_table(fn, e, cos, sin)
    if host.array == "list":
        raise Unsupported("the qk form takes 4-d numpy arrays or torch tensors, not nested lists")
    native = [host.native(v.reshape(-1, v.shape[-1]), np.zeros(1, np.int64), e)[0] for v in (q, k, cos, sin)]
    shaped = [v.reshape(t.shape) for v, t in zip(native, (q, k, cos, sin))]
    out = host.call("apply(q, k, cos, sin)", fn, *shaped)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise Fault(f"returned {type(out).__name__}, expected a pair (q_embed, k_embed)", "shape")
    return host.rows(out[0], e, tuple(q.shape)), host.rows(out[1], e, tuple(k.shape))


class KernelBound(Bound):
    def kernel(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> Call:
        """kernel(x, cos, sin) with one cos and one sin per pair, shape (n, rotary_dim/2) (spread per dim in the
        worker when the kernel declares ``table = "dim"``)."""
        out, mutated = self._op("kernel", f64(x), f64(cos), f64(sin))
        return Call(out, self.expect.dtype, mutated)

    def kernel_grad(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, g: np.ndarray) -> np.ndarray:
        """d<g, kernel(x, cos, sin)>/dx through its autograd (the table per pair, spread as for :meth:`kernel`)."""
        return self._op("kernel_grad", f64(x), f64(cos), f64(sin), f64(g))

    def qk_grad(self, q, k, cos, sin, gq, gk) -> tuple[np.ndarray, np.ndarray]:
        """(dq, dk) of <gq, q_embed> + <gk, k_embed> through apply(q, k, cos, sin)'s autograd."""
        return self._op("qk_grad", f64(q), f64(k), f64(cos), f64(sin), f64(gq), f64(gk))

    def qk(self, q: np.ndarray, k: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """qk form: transformers' apply(q, k, cos, sin) with q (b, h_q, s, d), k (b, h_kv, s, d) and the table per
        pair (b, s, rotary_dim/2), spread per dim in the worker: (q_embed, k_embed) as float64."""
        return self._op("qk", f64(q), f64(k), f64(cos), f64(sin))

    def rotate_by_kernel(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The kernel as f(x, p): x rotated by it with ropespec's exactly rounded table (ropespec.spec.angles.rounded_table),
        one head, one batch row (what the fingerprint probes: the convention, direction and rotary dims are the
        kernel's, the frequencies the table's)."""
        c, s = rounded_table(self.expect, positions)
        if self.host.shape.declared.q_and_k:
            x4 = f64(x)[None, None]
            return self.qk(x4, x4, c[None], s[None])[0].reshape(np.shape(x))
        return self.kernel(x, c, s).out


def _warm_kernel(host, fn, e: Expect) -> None:
    half = np.full((2, e.rotary_dim // 2), 0.5)
    op_kernel(host, fn, e, np.full((2, e.head_dim), 0.5), half, half)


def _warm_qk(host, fn, e: Expect) -> None:
    x, half = np.full((1, 1, 2, e.head_dim), 0.5), np.full((1, 2, e.rotary_dim // 2), 0.5)
    op_qk(host, fn, e, x, x, half, half)


def pipeline(kernel: Callable, table: Callable, form: Form, kernel_info: dict, table_info: dict) -> Callable:
    """A library's table builder and apply kernel (``--form kernel|qk --table TARGET``) as one apply function: a
    factory ``make(expect)`` building both (each a factory or a plain function, as ``*_info["mode"]`` says) and
    returning ``f(x, positions) = kernel(x, *table(positions))``, or for the qk form ``apply(x, x, cos, sin)[0]``
    with x as one head of one batch row. The library's own table, in its own dtype, goes to its kernel as it is."""
    for info in (kernel_info, table_info):
        if info["error"]:
            raise TargetError(info["error"])
    modes = (kernel_info["mode"], table_info["mode"])

    def make(expect: Expect):
        k, t = ((obj(expect) if mode == "factory" else obj) for obj, mode in zip((kernel, table), modes))
        if form.q_and_k:
            def apply(x, positions):
                cos, sin = t(positions)
                return k(x[None, None], x[None, None], cos[None], sin[None])[0].reshape(x.shape)
            return apply
        return lambda x, positions: k(x, *t(positions))

    make.promise = getattr(table, "promise", None)  # the table decides the angles' precision class
    return make


def _positions(shape, x, positions, *rest):
    """What f(x, positions, ...) hands over: the positions, or in the packed layout with one offset per sequence every
    token's (offset + its index in its sequence; cu_seqlens follows x and positions in layout and grad calls)."""
    cu = rest[0] if shape.laid_out.packed and rest else None
    if cu is not None and shape.positions == "per-sequence":
        return [token_positions(positions, cu)]
    return [positions]


def _grad_positions(shape, x, positions, g, cu_seqlens=None, *rest):
    return _positions(shape, x, positions, cu_seqlens)


_APPLY_INVARIANTS = ("rope.*", "axes.*", "contract.*", "scaling.*", "autograd.*")
_ROPE_OPS = {"call": Op(op_call, "f(x, positions)", _positions),
             "layout": Op(op_layout, "f(x, positions) in its layout", _positions),
             "grad": Op(op_grad, "f(x, positions) with autograd", _grad_positions)}
_DECODER_OPS = {"prefill": Op(op_prefill, "prefill", lambda shape, x, positions, rows=None: [positions]),
                "step": Op(op_step, "step", lambda shape, x, position, rows=None: [np.array([position])])}

APPLY = Form("rope", "apply", ((2,), "(x, positions)"), _APPLY_INVARIANTS, _ROPE_OPS, _warm_apply, RopeBound,
             as_rope=lambda f: f, diagnosed=True, decoder_invariants=("decode.consistency",),
             decoder_ops=_DECODER_OPS, decoder_bound=DecoderBound,
             layout_signatures={"thd": ((2, 3), "(x, positions, cu_seqlens)")},
             layouts=("nd", "bshd", "bhsd", "sbhd", "thd"), layouts_of="RoPE apply functions", writes_in_place=True,
             says_itself="an apply function")
VLLM = Form("rope", "vllm", ((3,), "(positions, query, key)"), _APPLY_INVARIANTS, _ROPE_OPS, _warm_apply, RopeBound,
            as_rope=lambda f: f, diagnosed=True, writes_in_place=True, says_itself="vLLM's forward", rows="vllm")
TABLE = Form("rope", "table", ((1,), "(positions)"), ("table.angles",),
             {"table": Op(op_table, "table(positions)", lambda shape, positions: [positions])},
             lambda host, fn, e: op_table(host, fn, e, _two_rows(e)), TableBound,
             as_rope=lambda f: f.rotate_by_table, diagnosed=True, plain_if=_table_is_plain)
KERNEL = Form("rope", "kernel", ((3,), "(x, cos, sin)"), ("kernel.rotation", "autograd.*"),
              {"kernel": Op(op_kernel, "kernel(x, cos, sin)"),
               "kernel_grad": Op(op_kernel_grad, "kernel(x, cos, sin) with autograd")}, _warm_kernel, KernelBound,
              as_rope=lambda f: f.rotate_by_kernel, handed_a_table=True)
QK = Form("rope", "qk", ((4,), "(q, k, cos, sin)"), ("kernel.qk", "autograd.*"),
          {"qk": Op(op_qk, "apply(q, k, cos, sin)"), "qk_grad": Op(op_qk_grad, "apply(q, k, cos, sin) with autograd")},
          _warm_qk, KernelBound, as_rope=lambda f: f.rotate_by_kernel, handed_a_table=True, q_and_k=True)
register(APPLY, VLLM, TABLE, KERNEL, QK)
