"""The T5 relative-bias family: ``bucket(relative_position, bidirectional, num_buckets, max_distance)`` ->
integer buckets of relative_position's shape (transformers' ``T5Attention._relative_position_bucket``, a plain
function of its arguments: the properties draw them), or the bias lookup ``lookup(table, q_positions, k_positions,
bidirectional, max_distance)`` -> (n_heads, n_q, n_k), table (num_buckets, n_heads) the learned bias of each bucket
and head (transformers' ``T5Attention.compute_bias``), told apart by the first parameter's name. A lookup's buckets
are read off it through a table of their own numbers, so every bucket invariant is checked on it too. Integers,
judged exactly."""

from __future__ import annotations

import inspect

import numpy as np

from ropespec.implementations.contract import CONTRACT_SHAPE, Fault, Unsupported
from ropespec.implementations.families.base import Bound, Form, Op, i64, register


#: the first parameter's names that make a function the bias lookup, lookup(table, q_positions, k_positions, ...)
LOOKUP_NAMES = ("table", "weight", "weights", "embedding", "bias_table", "relative_attention_bias")
LOOKUP = "lookup(table, q_positions, k_positions, bidirectional, max_distance)"


def _first(fn) -> str:
    try:
        return next(iter(inspect.signature(fn).parameters)).lower()
    except (TypeError, ValueError, StopIteration):
        return ""


def op_kind(host, fn, e) -> str:
    return "lookup" if _first(fn) in LOOKUP_NAMES else "bucket"


def op_lookup(host, fn, e, table, q, k, bidirectional, max_distance):
    """The lookup with ``table`` (num_buckets, n_heads), in the expectation's dtype: (n_heads, n_q, n_k) float64."""
    if op_kind(host, fn, e) != "lookup":
        raise Unsupported("TARGET is the bucket function bucket(relative_position, ...); the lookup invariant is about "
                          f"{LOOKUP}")
    native_table, native_q = host.native(table, q, e)
    out = host.call(LOOKUP, fn, native_table, native_q, host.native_positions(k, e), bool(bidirectional),
                    int(max_distance))
    return host.rows(out, e, (table.shape[1], len(q), len(k)))


def op_buckets(host, fn, e, relative, bidirectional, num_buckets, max_distance):
    """The buckets of every relative position: the function's own, or a lookup's through a table whose bucket b
    holds b (one head; a query at P and keys at P + d, P the largest distance before the query)."""
    if op_kind(host, fn, e) == "lookup":
        rel = np.asarray(relative, dtype=np.int64)
        at = max(0, -int(rel.min(initial=0)))
        table = np.arange(int(num_buckets), dtype=np.float64)[:, None]
        got = op_lookup(host, fn, e, table, np.array([at]), at + rel.ravel(), bidirectional, max_distance)[0, 0]
        return np.rint(got).astype(np.int64).reshape(rel.shape)
    what = "bucket(relative_position, bidirectional, num_buckets, max_distance)"
    out = host.call(what, fn, host.native_positions(relative, e), bool(bidirectional), int(num_buckets),
                    int(max_distance))
    if hasattr(out, "detach"):  # torch
        out = out.detach().cpu().numpy()
    arr = np.asarray(out)
    if arr.dtype.kind not in "iu":
        raise Fault(f"{what}: returned a {arr.dtype} array, expected integers (buckets)", "shape")
    if arr.shape != np.shape(relative):
        raise Fault(f"{what}: returned shape {arr.shape}, expected {np.shape(relative)}", "shape", cause=CONTRACT_SHAPE)
    return arr.astype(np.int64)


class T5Bound(Bound):
    def kind(self) -> str:
        """"bucket" for bucket(relative_position, ...), "lookup" for lookup(table, q_positions, k_positions, ...)."""
        return self._op("kind")

    def lookup(self, table: np.ndarray, q: np.ndarray, k: np.ndarray, bidirectional: bool, max_distance: int):
        """lookup(table, q_positions, k_positions, bidirectional, max_distance) as float64 (n_heads, n_q, n_k)."""
        return self._op("lookup", np.asarray(table, dtype=np.float64), i64(q), i64(k), bool(bidirectional),
                        int(max_distance))

    def buckets(self, relative: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
        """bucket(relative_position, ...) as int64 of relative_position's shape."""
        return self._op("buckets", i64(relative), bool(bidirectional), int(num_buckets), int(max_distance))


def _plain(obj) -> bool:
    """bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128), or a lookup(table, ...) with
    defaults after its table: one required argument, as a factory's make(expect), told apart by its name
    (transformers' T5Attention._relative_position_bucket)."""
    first = _first(obj)
    return first.startswith("relative") or first in LOOKUP_NAMES


T5_BIAS = Form("t5-bias", "apply", ((1, 2, 3, 4, 5), "(relative_position, bidirectional, num_buckets, max_distance) "
                                                     "or (table, q_positions, k_positions, bidirectional, max_distance)"),
               ("t5-bias.*",), {"buckets": Op(op_buckets, "bucket(relative_position, bidirectional, num_buckets, "
                                                          "max_distance)"),
                                # the bucket function takes relative positions, every integer of either sign: the
                                # domain rule bounds the lookup's queries and keys
                                "lookup": Op(op_lookup, LOOKUP, lambda shape, table, q, k, *rest: [q, k]),
                                "kind": Op(op_kind, "what it computes")},
               lambda host, fn, e: op_buckets(host, fn, e, np.array([-1, 0, 1]), True, 32, 128), T5Bound,
               plain_if=_plain)
register(T5_BIAS)
