"""The T5 relative-bias family: ``bucket(relative_position, bidirectional, num_buckets, max_distance)`` ->
integer buckets of relative_position's shape (transformers' ``T5Attention._relative_position_bucket``, a plain
function of its arguments: the properties draw them). Integers, judged exactly."""

from __future__ import annotations

import inspect

import numpy as np

from implementations.contract import Fault
from implementations.families.base import Bound, Form, Op, i64, register


def op_buckets(host, fn, e, relative, bidirectional, num_buckets, max_distance):
    what = "bucket(relative_position, bidirectional, num_buckets, max_distance)"
    out = host.call(what, fn, host.native_positions(relative, e), bool(bidirectional), int(num_buckets),
                    int(max_distance))
    if hasattr(out, "detach"):  # torch
        out = out.detach().cpu().numpy()
    arr = np.asarray(out)
    if arr.dtype.kind not in "iu":
        raise Fault(f"{what}: returned a {arr.dtype} array, expected integers (buckets)", "shape")
    if arr.shape != np.shape(relative):
        raise Fault(f"{what}: returned shape {arr.shape}, expected {np.shape(relative)}", "shape")
    return arr.astype(np.int64)


class T5Bound(Bound):
    def buckets(self, relative: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
        """bucket(relative_position, ...) as int64 of relative_position's shape."""
        return self._op("buckets", i64(relative), bool(bidirectional), int(num_buckets), int(max_distance))


def _plain(obj) -> bool:
    """bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128): one required argument, as a
    factory's make(expect), told apart by its name (transformers' T5Attention._relative_position_bucket)."""
    try:
        first = next(iter(inspect.signature(obj).parameters))
    except (TypeError, ValueError, StopIteration):
        return False
    return first.lower().startswith("relative")


def _rules(e) -> str:
    return "T5's buckets, judged exactly"


T5_BIAS = Form("t5-bias", "apply", ((1, 2, 3, 4), "(relative_position, bidirectional, num_buckets, max_distance)"),
               ("t5-bias.*",), {"buckets": Op(op_buckets, "bucket(relative_position, bidirectional, num_buckets, "
                                                          "max_distance)")},
               lambda host, fn, e: op_buckets(host, fn, e, np.array([-1, 0, 1]), True, 32, 128), T5Bound,
               plain_if=_plain, describe_rules=_rules, expect_fields=("dtype", "max_position"))
register(T5_BIAS)
