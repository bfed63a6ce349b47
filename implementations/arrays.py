"""Array kinds an implementation may take: numpy arrays, torch tensors, jax arrays, or nested Python lists.

All conversion between the suite's float64 numpy arrays and an implementation's native arrays
happens here, and so does all device handling. Values handed over are already representable in
the target dtype, so every conversion in either direction is exact.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np

ARRAYS = ("numpy", "torch", "jax", "list")
_NUMPY_DTYPES = ("float64", "float32", "float16")

#: how a batched input may be stored, per array kind (``rope.layout`` draws them; the result must not depend on
#: it): contiguous; a slice of a wider fused buffer (q, k, v side by side along the head axis); transposed storage
#: (the axes in reverse memory order); the first axis reversed (negative strides); one head broadcast to all
#: (zero strides, read-only: never handed to an in-place kernel). torch has no negative strides; jax arrays have
#: no user-visible storage.
STORAGES = {"numpy": ("contiguous", "fused", "transposed", "reversed", "broadcast"),
            "torch": ("contiguous", "fused", "transposed", "broadcast"), "jax": ("contiguous",), "list": ()}


class ArrayError(Exception):
    """An implementation returned something that is not the expected kind of array."""


class ShapeMismatch(ArrayError):
    """An implementation returned an array of the right kind and dtype but another shape than the contract's."""


def torch_module():
    """Import torch lazily; ``None`` when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


#: the most the compilations kept for jax targets take on disk (jax drops the least recently used beyond it)
JAX_CACHE_BYTES = 256 * 2**20


def jax_module():
    """Import jax lazily with float64 enabled (``jax_enable_x64``); ``None`` when it is not installed.

    Every compilation is kept on disk (jax's persistent compilation cache, in ``~/.cache/ropespec/jax`` unless the
    user has a cache of their own): each operation of an eager jax function is compiled once per shape and process,
    and the properties that need a fresh instance start a fresh worker process, which then reads the compilations
    back instead of making them again. The cache is keyed by the computation and jax's version: what runs is the
    same."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    if not jax.config.jax_compilation_cache_dir and not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        jax.config.update("jax_compilation_cache_dir", os.path.join(cache, "ropespec", "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_compilation_cache_max_size", JAX_CACHE_BYTES)
    return jax


def _jnp_dtype(dtype: str):
    import jax.numpy as jnp

    return getattr(jnp, dtype)


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
    elif array == "jax":
        if jax_module() is None:
            return "jax is not installed (pip install -e '.[jax]')"
        if device != "cpu":
            return f"--device {device}: jax arrays are checked on the CPU"
    elif device != "cpu":
        return f"--device {device} needs --array torch"
    return None


def to_native(x: np.ndarray, positions: np.ndarray, array: str, dtype: str, device: str = "cpu") -> tuple[Any, Any]:
    """Convert float64 rows and int64 positions into the implementation's kind of arrays, in C-contiguous
    memory of their own, as real model code receives q and k: an array the suite computed (a fancy index is
    Fortran-ordered) keeps its strides through astype and torch.tensor, and code such as
    ``torch.view_as_complex`` rightly refuses a last dimension whose stride is not 1. Only ``rope.layout``
    hands over other storage, on purpose (:func:`stored`), and its failures name the storage."""
    x = np.ascontiguousarray(x)
    positions = np.ascontiguousarray(positions)
    if array == "numpy":
        return x.astype(dtype, order="C"), positions.astype(np.int64, order="C")
    if array == "list":
        return x.tolist(), [int(p) for p in positions]
    if array == "jax":
        jnp = jax_module().numpy
        return jnp.asarray(x, dtype=_jnp_dtype(dtype)), jnp.asarray(positions, dtype=jnp.int64)
    torch = torch_module()
    tx = torch.tensor(x, dtype=getattr(torch, dtype), device=device)
    tp = torch.tensor(positions, dtype=torch.int64, device=device)
    return tx, tp


def complex_native(cos: np.ndarray, sin: np.ndarray, array: str, dtype: str, device: str = "cpu") -> Any:
    """cos + i sin (float64 arrays) as the implementation's complex array: complex64 for a float32 or narrower dtype
    (no complex bfloat16 exists, and Meta's and DeepSeek's code build their freqs_cis in complex64 whatever the dtype
    of x), complex128 for float64."""
    cdtype = "complex128" if dtype == "float64" else "complex64"
    z = np.ascontiguousarray(cos + 1j * sin).astype(cdtype)
    if array == "numpy":
        return z
    if array == "jax":
        return jax_module().numpy.asarray(z)
    if array == "list":
        raise ArrayError("a complex table is handed to numpy, torch or jax implementations, not nested lists")
    return torch_module().tensor(z, device=device)


def snapshot(value: Any, array: str) -> Any:
    """An independent copy of a native array, to detect writes into it."""
    if array == "numpy":
        return value.copy()
    if array == "list":
        return copy.deepcopy(value)
    if array == "jax":
        return value  # immutable: nothing can write into it
    return value.clone()


def same(a: Any, b: Any, array: str) -> bool:
    """Bit-for-bit equality of two native arrays (NaN equal to NaN)."""
    if array == "numpy":
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if array == "list":
        return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True)
    if array == "jax":
        return a is b or (a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
            np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True))
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
    return str(value.dtype).removeprefix("torch.")  # jax: numpy's names, bfloat16 too (ml_dtypes)


#: how many bits of significand each floating dtype carries (to tell a lower precision than promised)
_PRECISION = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def _kind_error(out: Any, array: str) -> str | None:
    """Why ``out`` is not a real floating-point array of the right kind, checked before any conversion."""
    if array == "numpy":
        if not isinstance(out, np.ndarray):
            return f"returned {type(out).__module__}.{type(out).__name__}, expected numpy.ndarray"
        if type(out) is not np.ndarray:  # a matrix multiplies where an array scales; a masked array hides values
            return (f"returned {type(out).__module__}.{type(out).__name__}, a subclass of numpy.ndarray whose "
                    f"operations mean something else; expected a plain numpy.ndarray")
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
    if array == "jax":
        jax = jax_module()
        if not isinstance(out, jax.Array):
            return f"returned {type(out).__module__}.{type(out).__name__}, expected a jax.Array"
        if not jax.numpy.issubdtype(out.dtype, jax.numpy.floating):  # numpy does not count bfloat16
            return f"returned a jax array of {out.dtype}, expected floating point"
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
        raise ShapeMismatch(f"returned shape {tuple(out.shape)}, expected {shape}")
    if array == "jax":  # to numpy first: a jax array indexed by rows is a gather compiled for every number of rows
        out = np.asarray(out)
    if rows is not None:
        out = out[rows if array != "torch" else torch_module().as_tensor(rows, device=out.device)]
    if array == "torch":
        out = out.detach().to(device="cpu", dtype=torch_module().float64).numpy()
    return np.asarray(out, dtype=np.float64)


# -- storage of batched inputs (rope.layout) -----------------------------------------------------------
def stored(values: list[np.ndarray], array: str, dtype: str, device: str, storage: str, axis: int):
    """Native arrays holding ``values`` (float64, each in the layout's axis order), stored as ``storage`` (one of
    :data:`STORAGES`): ``(views, buffer, regions)``, where ``buffer`` is all the memory handed over (every view
    lies in it) and ``regions[i]`` indexes view i in it. "fused" puts the values side by side along ``axis`` between
    two blocks of filler (a fused qkv buffer); "broadcast" keeps only index 0 along ``axis`` (the values must be
    equal along it)."""
    shapes = [v.shape for v in values]
    if storage == "fused":
        filler = [_filler(values[0].shape), _filler(values[-1].shape)]
        parts = [filler[0], *values, filler[1]]
        buf = _native(np.concatenate(parts, axis=axis), array, dtype, device)
        edges = np.cumsum([0] + [p.shape[axis] for p in parts])
        regions = [tuple([slice(None)] * axis + [slice(int(edges[i + 1]), int(edges[i + 2]))]) for i in range(len(values))]
        return [buf[r] for r in regions], buf, regions
    if len(values) > 1:  # each stored alike in memory of its own: a list of buffers, nothing around the views
        out = [stored([v], array, dtype, device, storage, axis) for v in values]
        return [o[0][0] for o in out], [o[1] for o in out], None
    v = values[0]
    whole = (tuple(slice(None) for _ in v.shape),)
    if storage == "transposed":
        order = tuple(reversed(range(v.ndim)))
        buf = _native(np.ascontiguousarray(v.transpose(order)), array, dtype, device)
        view = buf.T if array == "numpy" else buf.permute(order)
        return [view], buf, list(whole)
    if storage == "reversed":
        if array != "numpy":
            raise ValueError(f"{array} arrays have no negative strides")
        buf = _native(np.ascontiguousarray(v[::-1]), array, dtype, device)
        return [buf[::-1]], buf, list(whole)
    if storage == "broadcast":
        one = _native(np.ascontiguousarray(v.take([0], axis=axis)), array, dtype, device)
        view = np.broadcast_to(one, shapes[0]) if array == "numpy" else one.expand(*shapes[0])
        return [view], one, None
    buf = _native(np.ascontiguousarray(v), array, dtype, device)
    return [buf], buf, list(whole)


def _filler(shape) -> np.ndarray:
    """Filler around a view, exact in every dtype: a write outside the view shows unless it writes these very values
    (as a rotation at position 0 would)."""
    n = int(np.prod(shape))
    return (0.5 + (np.arange(n) % 7) / 8.0).reshape(shape)


def _native(v: np.ndarray, array: str, dtype: str, device: str):
    return to_native(v, np.zeros(0, dtype=np.int64), array, dtype, device)[0]


def written_outside(buffer, before, regions, array: str) -> bool:
    """Whether anything of ``buffer`` outside the ``regions`` (views handed to an in-place kernel) differs from
    ``before``, its snapshot."""
    now = snapshot(buffer, array)
    for r in regions:
        now[r] = before[r]
    return not same(now, before, array)

