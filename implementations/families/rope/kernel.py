"""The kernel forms: kernel(x, cos, sin) and transformers' apply(q, k, cos, sin), handed a table per dim or per
pair (TABLE_SHAPES), and a library's table and kernel checked together as one apply function (pipeline)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ropespec.implementations import arrays
from ropespec.implementations.contract import Call, Fault, TargetError, Unsupported
from ropespec.implementations.families.base import Bound, Form, f64
from ropespec.implementations.families.rope.table import per_dim
from ropespec.spec.angles import rounded_table
from ropespec.spec.expectation import Expect



#: how a kernel takes its table (``kernel.table``, default "dim"): one cos and one sin per pair, shape
#: (n, rotary_dim/2), or per dim, shape (n, rotary_dim), both dims of pair i holding its value, in the
#: layout the convention writes (transformers' cat([freqs, freqs]) for "half")
TABLE_SHAPES = ("dim", "pair")


# -- kernels: kernel(x, cos, sin) and transformers' apply(q, k, cos, sin) ----------------------------------------
def _table_shape(fn, what: str) -> str:
    shape = getattr(fn, "table", "dim")
    if shape not in TABLE_SHAPES:
        raise Fault(f"declares table = {shape!r}; {what} takes its cos/sin per 'dim' (the default) or per 'pair'",
                    "shape")
    return shape


def kernel_table(fn, e: Expect, cos, sin, what: str):
    """A per-pair table (n, rotary_dim/2) as the kernel takes it: as it is, or spread per dim (``kernel.table``)."""
    if _table_shape(fn, what) == "dim":
        _, _, oa, ob = e.pair_index()
        cos, sin = (per_dim(t, oa, ob, e.rotary_dim) for t in (cos, sin))
    return cos, sin


def qk_table(fn, e: Expect, cos, sin):
    """A per-pair table (b, s, rotary_dim/2) as transformers' apply takes it: per dim, or per pair (``table``)."""
    if _table_shape(fn, "apply") == "dim":
        _, _, oa, ob = e.pair_index()
        b, s_ = cos.shape[:2]
        cos, sin = (per_dim(t.reshape(b * s_, -1), oa, ob, e.rotary_dim).reshape(b, s_, -1) for t in (cos, sin))
    return cos, sin


def op_kernel(host, fn, e: Expect, x, cos, sin):
    """kernel(x, cos, sin) with the table per pair (n, rotary_dim/2) as given, or spread per dim as the kernel
    declares (``kernel.table``): (float64 result, which argument it wrote into)."""
    cos, sin = kernel_table(fn, e, cos, sin, "a kernel")
    zeros = np.zeros(len(x), dtype=np.int64)
    nx, nc, ns = (host.native(v, zeros, e)[0] for v in (x, cos, sin))
    keep = [arrays.snapshot(v, host.array) for v in (nx, nc, ns)]
    out = host.call("kernel(x, cos, sin)", fn, nx, nc, ns)
    mutated = next((name for name, v, k in zip(("x", "cos", "sin"), (nx, nc, ns), keep)
                    if not arrays.same(v, k, host.array)), None)
    return host.rows(out, e, tuple(np.shape(x))), mutated


def native_shaped(host, v: np.ndarray, e: Expect):
    """A float64 array of any shape as the implementation's array, in its dtype, of the same shape."""
    return host.native(v.reshape(-1, v.shape[-1]), np.zeros(1, np.int64), e)[0].reshape(v.shape)


def op_qk(host, fn, e: Expect, q, k, cos, sin):
    """apply(q, k, cos, sin) as transformers calls it: q (b, h_q, s, d), k (b, h_kv, s, d), cos and sin given per
    pair (b, s, rotary_dim/2) and handed over per dim (b, s, rotary_dim), or per pair when the function says
    ``table = "pair"`` (GPT-OSS): (q_embed, k_embed) as float64."""
    cos, sin = qk_table(fn, e, cos, sin)
    if host.array == "list":
        raise Unsupported("the qk form takes 4-d numpy arrays or torch tensors, not nested lists")
    shaped = [native_shaped(host, v, e) for v in (q, k, cos, sin)]
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


def warm_kernel(host, fn, e: Expect) -> None:
    half = np.full((2, e.rotary_dim // 2), 0.5)
    op_kernel(host, fn, e, np.full((2, e.head_dim), 0.5), half, half)


def warm_qk(host, fn, e: Expect) -> None:
    x, half = np.full((1, 1, 2, e.head_dim), 0.5), np.full((1, 2, e.rotary_dim // 2), 0.5)
    op_qk(host, fn, e, x, x, half, half)


def piped_kernel(kernel: Callable, table: Callable, layout: str) -> Callable:
    """f(x, positions) = kernel(x, *table(positions))."""
    return lambda x, positions: kernel(x, *table(positions))


def piped_qk(kernel: Callable, table: Callable, layout: str) -> Callable:
    """f(x, positions) = apply(x, x, cos, sin)[0] with x as one head of one batch row."""
    def apply(x, positions):
        cos, sin = table(positions)
        return kernel(x[None, None], x[None, None], cos[None], sin[None])[0].reshape(x.shape)

    return apply


def pipeline(kernel: Callable, table: Callable, form: Form, layout: str, kernel_info: dict,
             table_info: dict) -> Callable:
    """A library's table builder and apply kernel (``--form kernel|qk|complex --table TARGET``) as one apply
    function: a factory ``make(expect)`` building both (each a factory or a plain function, as ``*_info["mode"]``
    says) and returning the form's f(x, positions) through the table (``form.piped``). The library's own table, in
    its own dtype, goes to its kernel as it is."""
    for info in (kernel_info, table_info):
        if info["error"]:
            raise TargetError(info["error"])
    modes = (kernel_info["mode"], table_info["mode"])

    def make(expect: Expect):
        k, t = ((obj(expect) if mode == "factory" else obj) for obj, mode in zip((kernel, table), modes))
        return form.piped(k, t, layout)

    make.promise = getattr(table, "promise", None)  # the table decides the angles' precision class
    return make
