"""Assertion helpers with one failure grammar: ``what=got, but should be expected [call]``.

The cheap vectorised comparison runs first; per-element detail is computed only on failure.
Each helper returns the worst error as a fraction of its bound (for the report) or raises
:class:`implementations.Failure`.
"""

from __future__ import annotations

import numpy as np

from ropespec.implementations.contract import Failure
from ropespec.spec.dtypes import ulp


def _fmt(v: float) -> str:
    return repr(float(v)) if np.isfinite(v) else str(v)


def assert_close(
    what: str,
    got: np.ndarray,
    expected: np.ndarray,
    bound: np.ndarray | float,
    *,
    call: str,
    dtype: str = "float64",
    diagnosis: str | None = None,
    index_names: tuple[str, ...] = ("row", "dim"),
    against: str | None = None,
) -> float:
    """|got - expected| <= bound elementwise (NaN never passes). Returns max error/bound.

    ``expected`` is the reference, or (``against``: what it is, such as "f(x, a + b)") another output of the
    implementation compared with ``got``: a non-finite value there, or in a bound derived from its outputs, is a
    ``non-finite`` finding about the implementation, said as such."""
    __tracebackhide__ = True
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), got.shape)
    if against is not None and np.all(np.isfinite(got)):
        for side, values in ((against, expected), ("the bound, derived from its outputs,", bound)):
            bad = ~np.isfinite(np.broadcast_to(values, got.shape))
            if bad.any():
                idx = np.unravel_index(int(np.argmax(bad)), got.shape)
                where = ", ".join(f"{n} {i}" for n, i in zip(index_names, idx))
                other = _fmt(expected[idx]) if side == against else _fmt(bound[idx])
                raise Failure(f"{what}[{where}]={_fmt(got[idx])} is finite, but {side} is {other} there", "non-finite",
                              float("inf"), call=call,
                              detail=f"the implementation's output is non-finite; {int(bad.sum())} of {bad.size} elements")
    err = np.abs(got - expected)
    ok = err <= bound
    if ok.all():
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(bound > 0, err / bound, 0.0)
        return float(ratio.max()) if ratio.size else 0.0
    bad = ~ok
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(np.isnan(err), np.inf, np.where(bound > 0, err / bound, np.inf))
    score = np.where(bad, score, -1.0)
    idx = np.unravel_index(int(np.argmax(score)), got.shape)
    g, e, b, er = got[idx], expected[idx], bound[idx], err[idx]
    where = ", ".join(f"{n} {i}" for n, i in zip(index_names, idx))
    if not np.isfinite(g):  # the implementation's own output: what the other side holds is beside the point
        expected_text = f", where {_fmt(e)} was expected" if np.isfinite(e) else ""
        nonfinite = int((~np.isfinite(got)).sum())
        raise Failure(f"{what}[{where}]", "non-finite", float(score[idx]), got=_fmt(g), call=call,
                      detail=f"the implementation's output is non-finite{expected_text}; {nonfinite} of {got.size} "
                             f"elements non-finite")
    else:
        with np.errstate(over="ignore"):
            ulps = er / float(ulp(max(abs(e), abs(g)), dtype))
        detail = (
            f"|error| {er:.3g} > bound {b:.3g} ({ulps:.3g} ulp of {dtype}); "
            f"{int(bad.sum())} of {bad.size} elements outside the bound"
        )
    raise Failure(f"{what}[{where}]", diagnosis, float(score[idx]), got=_fmt(g), expected=_fmt(e), detail=detail,
                  call=call)


def assert_equal(what: str, got: np.ndarray, expected: np.ndarray, *, call: str, diagnosis: str | None = None,
                 index_names: tuple[str, ...] = ("row", "dim")) -> float:
    """Bit-for-bit equality (as float64 values; NaN equals NaN). Returns 0.0."""
    __tracebackhide__ = True
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    if same.all():
        return 0.0
    idx = np.unravel_index(int(np.argmin(same)), got.shape)
    where = ", ".join(f"{n} {i}" for n, i in zip(index_names, idx))
    raise Failure(f"{what}[{where}]", diagnosis, float("inf"), got=_fmt(got[idx]), expected=_fmt(expected[idx]),
                  detail=f"{int((~same).sum())} of {same.size} elements differ, where each must be equal bit for bit",
                  call=call)


def assert_zero(what: str, got: np.ndarray, floor: float, *, call: str, rule: str,
                index_names: tuple[str, ...] = ("row", "dim")) -> float:
    """|got| <= floor elementwise, for a rule that asks for exactly zero (``floor``: the output dtype's smallest
    normals, which a correct computation may leave): a failure says the rule and the value, not a ratio to the
    floor. Returns the worst |got| / floor where it holds."""
    __tracebackhide__ = True
    got = np.asarray(got, dtype=np.float64)
    bad = ~(np.abs(got) <= floor)
    if not bad.any():
        return float(np.max(np.abs(got)) / floor) if got.size and floor > 0 else 0.0
    idx = np.unravel_index(int(np.argmax(np.where(bad, np.abs(np.nan_to_num(got, nan=np.inf)), -1.0))), got.shape)
    where = ", ".join(f"{n} {i}" for n, i in zip(index_names, idx))
    raise Failure(f"{what}[{where}]", "non-finite" if not np.isfinite(got[idx]) else None, None, got=_fmt(got[idx]),
                  expected="0", call=call,
                  detail=f"{rule} (a correct computation leaves at most {floor:.2g}, the dtype's smallest normals); "
                         f"{int(bad.sum())} of {bad.size} elements nonzero")
