"""Floating-point formats the spec talks about: their unit roundoff and correct rounding into them.

numpy has no bfloat16, so rounding to bfloat16 is done here, exactly, in float64 arithmetic
(bfloat16 keeps 8 significant bits and float32's exponent range).
"""

from __future__ import annotations

import numpy as np

#: significant bits (including the implicit one) of each format
MANTISSA_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
#: smallest normal number of each format
TINY = {"float64": 2.0**-1022, "float32": 2.0**-126, "float16": 2.0**-14, "bfloat16": 2.0**-126}
#: largest finite number of each format
MAX = {
    "float64": float(np.finfo(np.float64).max),
    "float32": float(np.finfo(np.float32).max),
    "float16": 65504.0,
    "bfloat16": float.fromhex("0x1.fep127"),
}


def unit_roundoff(dtype: str) -> float:
    """u = 2**-p for a format of p significant bits: the largest relative error of rounding to nearest."""
    return 2.0 ** -MANTISSA_BITS[dtype]


def exact_integer_limit(dtype: str) -> int:
    """Every integer of magnitude <= this is representable in ``dtype`` (2**p)."""
    return 2 ** MANTISSA_BITS[dtype]


def round_to(x: np.ndarray | float, dtype: str) -> np.ndarray:
    """Round float64 values to the nearest value of ``dtype`` (ties to even), returned as float64."""
    a = np.asarray(x, dtype=np.float64)
    if dtype == "float64":
        return a.copy()
    if dtype in ("float32", "float16"):
        with np.errstate(over="ignore"):  # beyond the format's range the nearest value is inf
            return a.astype(dtype).astype(np.float64)  # numpy's casts round correctly from float64
    if dtype == "bfloat16":
        p = MANTISSA_BITS["bfloat16"]
        m, e = np.frexp(a)  # a = m * 2**e, 0.5 <= |m| < 1
        e = np.maximum(e, -125)  # below bfloat16's normal range the spacing is fixed (subnormals)
        scaled = np.ldexp(a, p - e)  # exact: a power-of-two scaling
        out = np.ldexp(np.round(scaled), e - p)  # np.round rounds half to even
        return np.where(np.abs(out) > MAX["bfloat16"], np.copysign(np.inf, a), out)
    raise ValueError(f"unknown dtype {dtype!r}")


def ulp(x: np.ndarray | float, dtype: str) -> np.ndarray:
    """Spacing of ``dtype`` values at |x| (the gap to the next larger magnitude)."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    p = MANTISSA_BITS[dtype]
    _, e = np.frexp(np.maximum(a, TINY[dtype]))
    return np.ldexp(1.0, e - p)
