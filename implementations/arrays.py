"""Array kinds an implementation may take: numpy arrays, torch tensors, or nested Python lists.

All conversion between the suite's float64 numpy arrays and an implementation's native arrays
happens here, and so does all device handling. Values handed over are already representable in
the target dtype, so every conversion in either direction is exact.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

ARRAYS = ("numpy", "torch", "list")
_NUMPY_DTYPES = ("float64", "float32", "float16")


class ArrayError(Exception):
    """An implementation returned something that is not the expected kind of array."""


def torch_module():
    """Import torch lazily; ``None`` when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def unsupported_reason(array: str, dtype: str, device: str = "cpu") -> str | None:
    """Why this (array, dtype, device) cannot be used here, or None when it can."""
    if array not in ARRAYS:
        return f"unknown array kind {array!r} (known: {', '.join(ARRAYS)})"
    if array == "numpy" and dtype not in _NUMPY_DTYPES:
        return f"numpy has no {dtype}; use --array torch"
    if array == "list" and dtype != "float64":
        return f"Python lists hold float64 only, not {dtype}"
    if array == "torch":
        torch = torch_module()
        if torch is None:
            return "torch is not installed (pip install -e '.[torch]')"
        if device != "cpu" and device.startswith("cuda") and not torch.cuda.is_available():
            return "CUDA is not available on this machine"
    elif device != "cpu":
        return f"--device {device} needs --array torch"
    return None


def to_native(x: np.ndarray, positions: np.ndarray, array: str, dtype: str, device: str = "cpu") -> tuple[Any, Any]:
    """Convert float64 rows and int64 positions into the implementation's kind of arrays."""
    if array == "numpy":
        return x.astype(dtype), positions.astype(np.int64)
    if array == "list":
        return x.tolist(), [int(p) for p in positions]
    torch = torch_module()
    tx = torch.tensor(x, dtype=getattr(torch, dtype), device=device)
    tp = torch.tensor(positions, dtype=torch.int64, device=device)
    return tx, tp


def snapshot(value: Any, array: str) -> Any:
    """An independent copy of a native array, to detect writes into it."""
    if array == "numpy":
        return value.copy()
    if array == "list":
        return copy.deepcopy(value)
    return value.clone()


def same(a: Any, b: Any, array: str) -> bool:
    """Bit-for-bit equality of two native arrays (NaN equal to NaN)."""
    if array == "numpy":
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if array == "list":
        return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True)
    torch = torch_module()
    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a.nan_to_num(0.5), b.nan_to_num(0.5))) and bool(
        torch.equal(a.isnan(), b.isnan())
    )


def native_dtype(value: Any, array: str) -> str:
    """The dtype name of a native array ("float64" for Python lists of floats)."""
    if array == "numpy":
        return str(value.dtype)
    if array == "list":
        return "float64"
    return str(value.dtype).removeprefix("torch.")


#: how many bits of significand each floating dtype carries (to tell a lower precision than promised)
_PRECISION = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def _kind_error(out: Any, array: str) -> str | None:
    """Why ``out`` is not a real floating-point array of the right kind, checked before any conversion."""
    if array == "numpy":
        if not isinstance(out, np.ndarray):
            return f"returned {type(out).__module__}.{type(out).__name__}, expected numpy.ndarray"
        if out.dtype.kind != "f":
            return f"returned a {_numpy_kind(out.dtype)} array (dtype {out.dtype}), expected floating point"
        return None
    if array == "list":
        if not isinstance(out, (list, tuple)):
            return f"returned {type(out).__name__}, expected a list of lists of floats"
        for row in out:
            if not isinstance(row, (list, tuple)):
                return f"returned a list of {type(row).__name__}, expected a list of lists of floats"
            for v in row:
                if not isinstance(v, float):  # bool, int, str, complex, None...
                    return f"returned a list holding {type(v).__name__} {v!r}, expected floats"
        return None
    torch = torch_module()
    if not isinstance(out, torch.Tensor):
        return f"returned {type(out).__module__}.{type(out).__name__}, expected torch.Tensor"
    if out.device.type == "meta":
        return "returned a meta tensor (it has a shape but no values)"
    if out.is_complex():
        return f"returned a complex tensor ({str(out.dtype).removeprefix('torch.')}), expected a real one"
    if not out.is_floating_point():
        return f"returned a tensor of {str(out.dtype).removeprefix('torch.')}, expected floating point"
    return None


def _numpy_kind(dtype: np.dtype) -> str:
    return {"c": "complex", "i": "integer", "u": "unsigned integer", "b": "boolean", "U": "string", "S": "bytes",
            "O": "object"}.get(dtype.kind, dtype.kind)


def from_native(out: Any, array: str, shape: tuple[int, ...], dtype: str | None = None, rows=None) -> np.ndarray:
    """Convert an implementation's result back to float64 numpy, after checking its kind (a real
    floating-point array, not meta, complex, integer, boolean, string or object), its dtype (not less
    precise than the promised ``dtype``) and its shape. ``rows``: convert only these rows (the checks
    still see the whole result), so that a long KV cache costs what the rows checked cost."""
    problem = _kind_error(out, array)
    if problem:
        raise ArrayError(problem)
    got = native_dtype(out, array)
    if dtype is not None and _PRECISION.get(got, 99) < _PRECISION[dtype]:
        raise ArrayError(f"returned {got}, less precise than the promised {dtype}")
    if array == "list":
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ArrayError(f"returned a list that is not a rectangular list of numbers ({e})") from None
    if tuple(out.shape) != shape:
        raise ArrayError(f"returned shape {tuple(out.shape)}, expected {shape}")
    if rows is not None:
        out = out[rows if array != "torch" else torch_module().as_tensor(rows, device=out.device)]
    if array == "torch":
        out = out.detach().to(device="cpu", dtype=torch_module().float64).numpy()
    return np.asarray(out, dtype=np.float64)
