"""The apply form's calls across the process boundary: f(x, positions) in every layout (nd, batched, packed)
and vLLM's forward, with jax calls padded to a few lengths; RopeBound, how a property calls them."""

from __future__ import annotations

import math

import numpy as np

from ropespec.implementations import arrays
from ropespec.implementations.contract import Call, Fault, Unsupported
from ropespec.implementations.families.base import Bound, f64, i64
from ropespec.spec.expectation import Expect
from ropespec.spec.tables import table_variant


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
    x, positions, pad = pad_rows(host, e, x, positions)
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


def pad_rows(host, e: Expect, x, positions, g=None):
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



def warm_apply(host, fn, e: Expect) -> None:
    op_call(host, fn, e, np.full((2, e.head_dim), 0.5), two_rows(e))


def two_rows(e: Expect) -> np.ndarray:
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
