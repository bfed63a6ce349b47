"""The host side of the process boundary: where the implementation under test is loaded, built and
called.

A :class:`Host` holds the loaded TARGET and the functions its factory built (one per handle), and
answers operations (``call``, ``prefill``, ``step``, ``pe``, ``lookup``, ``attend``, ...) with float64
numpy arrays. Every conversion into and out of the implementation's kind of arrays, every check of what
it returned (kind, dtype, shape) and every exception it raised are dealt with here, so the parent only
ever sees plain arrays or a :class:`~implementations.contract.Fault` that names the fault.

The same Host runs in a worker process (``implementations.worker``, the default) or, for a callable
that another process cannot load (a lambda, a function defined in ``__main__``), in the caller's own
process (:class:`InProcessHost`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from implementations import arrays
from implementations.contract import (
    OUT_OF_MEMORY,
    Fault,
    TargetError,
    Unsupported,
    describe_exit,
    format_bytes,
    is_decoder,
    is_out_of_memory,
    mode_of,
    where,
)
from spec.expectation import Expect

#: the number of required arguments a plain (not factory) TARGET takes, per kind, and how it reads
PLAIN_SHAPES = {"rope": (2, "(x, positions)"), "vllm": (3, "(positions, query, key)"),
                "thd": ((2, 3), "(x, positions, cu_seqlens)"), "sinusoidal": (2, "(positions, d)"),
                "attention": (5, "(q, k, v, positions, causal)"), "kernel": (3, "(x, cos, sin)"),
                "table": (1, "(positions)"), "qk": (4, "(q, k, cos, sin)")}

#: how an apply function takes its rows (``--layout``, and ``--form vllm``), with the canonical axes (batch, seq,
#: head, dim) of the batched layouts in the order each puts them: nd f(x (n, d), positions (n,)); bshd, bhsd,
#: sbhd f(x, positions (batch, seq)); thd f(x (tokens, heads, d), offsets (sequences,), cu_seqlens=...) with
#: token j of sequence i at offsets[i] + j - cu_seqlens[i]; vllm forward(positions (tokens,), query (tokens,
#: h_q d), key (tokens, h_kv d)) -> (query, key)
LAYOUTS = ("nd", "bshd", "bhsd", "sbhd", "thd", "vllm")
AXES = {"bshd": (0, 1, 2, 3), "bhsd": (0, 2, 1, 3), "sbhd": (1, 0, 2, 3)}

#: how a kernel takes its table (``kernel.table``, default "dim"): one cos and one sin per pair, shape
#: (n, rotary_dim/2), or per dim, shape (n, rotary_dim), both dims of pair i holding its value, in the
#: layout the convention writes (transformers' cat([freqs, freqs]) for "half")
TABLE_SHAPES = ("dim", "pair")


# -- loading ---------------------------------------------------------------------------------------
def _import_file(path: Path):
    name = f"_ropespec_target_{abs(hash(str(path.resolve())))}"
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # a TARGET file imports its sibling modules
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise TargetError(f"{path}: import failed: {_import_error(e)}") from None
    return module


def _import_error(e: Exception) -> str:
    """What an import raised, pointing at the user's line: a SyntaxError's own file and line (its traceback ends
    in importlib's machinery), else the innermost frame of the user's code."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"{type(e).__name__}: {e.msg} at {Path(e.filename).name}:{e.lineno}"
    return f"{type(e).__name__}: {e}{where(e)}"


def load_module(mod: str):
    """Import ``path/to/file.py`` or ``package.module``; one-line TargetError when impossible."""
    if mod.endswith(".py") or "/" in mod or "\\" in mod or Path(mod).is_file():
        path = Path(mod)
        if not path.is_file():
            raise TargetError(f"{mod}: no such file")
        if path.suffix != ".py":
            raise TargetError(f"{mod}: not a Python file (a TARGET is path/to/file.py:name or package.module:name)")
        return _import_file(path)
    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and mod.startswith(e.name):
            raise TargetError(f"{mod}: no such module") from None
        raise TargetError(f"{mod}: import failed: ModuleNotFoundError: {e}") from None
    except Exception as e:
        raise TargetError(f"{mod}: import failed: {_import_error(e)}") from None


def _attribute(module, spec: str, mod: str, name: str):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{spec}: {mod} has no attribute {part!r}")
        obj = getattr(obj, part)
    return obj


def resolve(ref: dict) -> Callable:
    """The callable a reference names: ``{"target": "file.py:name" | "module:name"}``, or a function
    object's ``{"module", "file", "qualname"}`` (imported by module name, else from its file)."""
    if "target" in ref:
        spec = ref["target"]
        mod, sep, name = spec.rpartition(":")
        if not sep or not mod or not name:
            raise TargetError(f"{spec}: expected path/to/file.py:name or package.module:name")
        first, _, rest = spec.partition(":")
        if ":" in rest and Path(first).is_file():  # good.py:apply:extra
            raise TargetError(f"{spec}: a TARGET has one colon, {first}:name (a dotted name reaches an attribute: "
                              f"{first}:{rest.replace(':', '.')})")
        obj = _attribute(load_module(mod), spec, mod, name)
        if not callable(obj):
            raise TargetError(f"{spec}: {name} is a {type(obj).__name__}, not callable")
        return obj
    module = None
    if ref.get("module") and ref["module"] != "__main__":
        try:
            module = importlib.import_module(ref["module"])
        except Exception:
            module = None
    if module is None:
        if not ref.get("file"):
            raise TargetError(f"{ref['qualname']}: its module {ref.get('module')!r} cannot be imported")
        module = _import_file(Path(ref["file"]))
    return _attribute(module, f"{ref.get('file') or ref['module']}:{ref['qualname']}", ref.get("module") or "", ref["qualname"])


def describe_loaded(obj: Callable, kind: str, label: str) -> dict:
    """What the parent needs to know of a loaded TARGET: its mode, declared failures, and a one-line
    error when its signature fits no contract of ``kind``."""
    info = {"mode": None, "expected_failures": {}, "error": None}
    try:
        info["mode"] = mode_of(obj)
    except TargetError as e:
        info["error"] = f"{label}: {e}"
        return info
    if kind == "table" and info["mode"] == "factory" and _sole_parameter(obj).lower().startswith("position"):
        info["mode"] = "plain"  # table(positions): one argument, as a factory's, told apart by its name
    ef = getattr(obj, "expected_failures", {})
    info["expected_failures"] = {str(k): str(v) for k, v in dict(ef).items()} if isinstance(ef, dict) else {}
    promise = getattr(obj, "promise", None)  # the precision class a factory promises: angle/inv_freq dtypes
    if isinstance(promise, dict):
        info["promise"] = {k: str(v) for k, v in promise.items() if k in ("angle_dtype", "inv_freq_dtype")}
    if info["mode"] == "plain":
        want = PLAIN_SHAPES.get(kind)
        if want is None:
            info["error"] = f"{label}: a {kind} TARGET is a factory make(expect)"
            return info
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return info
        n = sum(1 for p in sig.parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        if n not in (want[0] if isinstance(want[0], tuple) else (want[0],)):
            info["error"] = f"{label}: must take {want[1]} or (expect); its signature is {sig}"
    return info


def _sole_parameter(obj: Callable) -> str:
    try:
        return next(iter(inspect.signature(obj).parameters))
    except (TypeError, ValueError, StopIteration):
        return ""


def pipeline(kernel: Callable, table: Callable, form: str, label: str, table_label: str) -> Callable:
    """A library's table builder and apply kernel (``--form kernel|qk --table TARGET``) as one apply function: a
    factory ``make(expect)`` building both (each a factory or a plain function) and returning
    ``f(x, positions) = kernel(x, *table(positions))``, or for the qk form ``apply(x, x, cos, sin)[0]`` with x as one
    head of one batch row. The library's own table, in its own dtype, goes to its kernel as it is."""
    modes = []
    for obj, kind, what in ((kernel, form, label), (table, "table", table_label)):
        info = describe_loaded(obj, kind, what)
        if info["error"]:
            raise TargetError(info["error"])
        modes.append(info["mode"])

    def make(expect: Expect):
        k, t = ((obj(expect) if mode == "factory" else obj) for obj, mode in zip((kernel, table), modes))
        if form == "qk":
            def apply(x, positions):
                cos, sin = t(positions)
                return k(x[None, None], x[None, None], cos[None], sin[None])[0].reshape(x.shape)
            return apply
        return lambda x, positions: k(x, *t(positions))

    make.promise = getattr(table, "promise", None)  # the table decides the angles' precision class
    return make


# -- calling ---------------------------------------------------------------------------------------
def guarded(what: str, fn: Callable, *args, in_worker: bool = True):
    """Call the implementation; whatever it raises becomes a Fault with its word. In a worker a
    KeyboardInterrupt can only come from the target itself (the worker never receives Ctrl-C)."""
    try:
        return fn(*args)
    except (Unsupported, TargetError):
        raise
    except Exception as e:
        if is_out_of_memory(e):  # ended as a process would have ended without the limit: no further case runs
            raise Fault(f"{what} ran out of memory: {type(e).__name__}: {e}{where(e)}{_memory_limit_note()}", "crash",
                        cause=OUT_OF_MEMORY) from None
        hint = ""
        if what == "factory" and "Expect" in str(e):  # a one-argument function handed an expectation
            hint = (" (it has one required argument, so it was called as a factory, make(expect): a plain function "
                    "takes (x, positions), a factory takes (expect) and returns such a function)")
        raise Fault(f"{what} raised {type(e).__name__}: {e}{where(e)}{hint}", "exception") from None
    except SystemExit as e:
        raise Fault(f"{what} {describe_exit(e)}: it tried to end the process{where(e)}", "crash") from None
    except KeyboardInterrupt as e:
        if not in_worker:
            raise  # in-process, Ctrl-C and a target's own KeyboardInterrupt look alike: it is the user's
        raise Fault(f"{what} raised KeyboardInterrupt itself (no Ctrl-C was sent){where(e)}", "exception") from None
    except BaseException as e:  # GeneratorExit or a user's BaseException subclass
        raise Fault(f"{what} raised {type(e).__name__} (a BaseException, not an Exception): {e}{where(e)}",
                    "exception") from None


def _memory_limit_note() -> str:
    """' (at the worker's memory limit of 12 GB, --memory-limit)' where this process has one."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_DATA)[0]
    except (ImportError, OSError, ValueError):
        return ""
    if soft in (resource.RLIM_INFINITY, -1):
        return ""
    return f" (at the worker's memory limit of {format_bytes(soft)}, --memory-limit)"


def limit_memory(limit: int | None) -> None:
    """Cap this process's data (heap and private writable mappings: numpy's and torch's arrays) at ``limit`` bytes,
    enforced by the kernel (RLIMIT_DATA): an allocation beyond it fails with MemoryError rather than take the
    machine down. None: no limit."""
    if not limit:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (int(limit), int(limit)))
    except (ImportError, OSError, ValueError):
        pass  # not on this system: the parent still reads a SIGKILL's peak memory


def plain(value):
    """A result as plain Python values (numpy arrays and scalars become lists and floats)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


class Host:
    """A loaded TARGET and the functions built from it, answering operations with float64 arrays."""

    in_worker = True

    def __init__(self, obj: Callable, mode: str, array: str, device: str = "cpu", kind: str = "rope",
                 layout: str = "nd", inplace: bool = False):
        self.obj = obj
        self.mode = mode
        self.kind = kind
        self.layout = layout
        self.inplace = inplace
        self.array = array
        self.device = device
        self.fns: dict[int, Any] = {}
        self.expects: dict[int, Expect] = {}

    def _call(self, what: str, fn: Callable, *args):
        return guarded(what, fn, *args, in_worker=self.in_worker)

    # handles -------------------------------------------------------------------------------------
    def bind(self, hid: int, expect: Expect) -> dict:
        """Build the function for ``expect`` under handle ``hid`` (the factory is called once)."""
        if self.mode == "plain":
            fn = self.obj
        else:
            def build(e: Expect):
                try:
                    return self.obj(e)
                except NotImplementedError as err:  # the factory declines this expectation
                    raise Unsupported(str(err) or "NotImplementedError") from None

            fn = self._call("factory", build, expect)
            if not is_decoder(fn) and not callable(fn):
                raise Fault(f"it has one required argument, so it was called as a factory, make(expect), and returned "
                            f"{type(fn).__name__}, not a function: a plain function takes (x, positions), a factory "
                            f"takes (expect) and returns such a function", "shape")
        self.fns[hid] = fn
        self.expects[hid] = expect
        return {"decoder": is_decoder(fn)}

    def warmup(self, hid: int) -> None:
        """One small call (two rows at positions 0 and 1) before the first timed one, so that imports,
        JIT compilation and autotuning happen on the warm-up budget. What it returns or raises is not
        judged here (the properties judge every call); only ending the process counts (a crash)."""
        fn, e = self.fns[hid], self.expects[hid]
        if is_decoder(fn):
            return None  # stateful: its factory call was the warm-up
        pos = np.array([0, 1], dtype=np.int64)
        try:
            if self.kind == "sinusoidal":
                self.op_pe(fn, e, pos)
            elif self.kind == "learned":
                self.op_lookup(fn, e, pos[:1])
            elif self.kind == "table":
                self.op_table(fn, e, pos)
            elif self.kind == "qk":
                x, half = np.full((1, 1, 2, e.head_dim), 0.5), np.full((1, 2, e.rotary_dim // 2), 0.5)
                self.op_qk(fn, e, x, x, half, half)
            elif self.kind == "kernel":
                half = np.full((2, e.rotary_dim // 2), 0.5)
                self.op_kernel(fn, e, np.full((2, e.head_dim), 0.5), half, half)
            elif self.kind == "attention":
                q = np.full((2, e.n_heads * e.head_dim), 0.5)
                kv = np.full((2, e.n_kv_heads * e.head_dim), 0.5)
                self.op_attend(fn, e, q, kv, kv, pos, True)
            else:
                self.op_call(fn, e, np.full((2, e.head_dim), 0.5), pos)
        except Fault as err:
            if err.diagnosis == "crash":
                raise
        return None

    def drop(self, hid: int) -> None:
        self.fns.pop(hid, None)
        self.expects.pop(hid, None)

    def op(self, hid: int, name: str, args: tuple):
        method = getattr(self, f"op_{name}", None)
        if method is None:
            raise ValueError(f"unknown operation {name!r}")
        return method(self.fns[hid], self.expects[hid], *args)

    # conversions ---------------------------------------------------------------------------------
    def _native(self, x, positions, e: Expect):
        return arrays.to_native(x, np.asarray(positions, dtype=np.int64), self.array, e.dtype, self.device)

    def _positions(self, positions, e: Expect):
        return self._native(np.zeros((len(positions), 1)), positions, e)[1]

    def _rows(self, out, e: Expect, shape: tuple[int, int], rows=None) -> np.ndarray:
        try:
            return arrays.from_native(out, self.array, shape, e.dtype, rows)
        except arrays.ArrayError as err:
            raise Fault(str(err), "shape") from None

    # operations ----------------------------------------------------------------------------------
    def op_call(self, fn, e: Expect, x, positions):
        """f(x, positions): (float64 result, the dtype returned, which argument it wrote into). In another layout the
        rows are one sequence of one head (thd: n sequences of one token, at offsets ``positions``); an in-place
        function's result is x after the call."""
        if self.layout != "nd":
            n, d = np.shape(x)
            x = np.asarray(x, dtype=np.float64)
            if self.layout == "thd":
                got = self.op_layout(fn, e, x.reshape(n, 1, d), positions, np.arange(n + 1))
            elif self.layout == "vllm":
                got = self.op_layout(fn, e, x.reshape(n, 1, d), positions, key=x.reshape(n, 1, d))
            else:
                got = self.op_layout(fn, e, x.reshape(1, n, 1, d), np.reshape(positions, (1, n)))
            if got["outside"]:
                raise Fault(got["outside"], "input-mutated")
            return got["out"].reshape(n, d), got["dtype"], got["mutated"]
        nx, npos = self._native(x, positions, e)
        keep_x, keep_p = arrays.snapshot(nx, self.array), arrays.snapshot(npos, self.array)
        out = self._call("f(x, positions)", fn, nx, npos)
        mutated = None
        if self.inplace:
            out = nx
        elif not arrays.same(nx, keep_x, self.array):
            mutated = "x"
        if mutated is None and not arrays.same(npos, keep_p, self.array):
            mutated = "positions"
        arr = self._rows(out, e, tuple(np.shape(x)))
        return arr, arrays.native_dtype(out, self.array), mutated

    def op_layout(self, fn, e: Expect, x, positions, cu_seqlens=None, storage: str = "contiguous", key=None) -> dict:
        """One call in the subject's layout (:data:`LAYOUTS`) with x in canonical axes, (batch, seq, head, dim), or
        (tokens, head, dim) for thd and vllm (whose ``key`` is (tokens, h_kv, dim)), stored as ``storage``
        (:data:`arrays.STORAGES`). Returns {"out", "key" (vllm), "dtype", "mutated", "outside"}: the results in
        canonical axes as float64 (an in-place function's are its arguments after the call), which argument an
        out-of-place function wrote into, and what an in-place one wrote outside its views."""
        if self.array == "list":
            raise Unsupported("the batched layouts take numpy arrays, torch or jax tensors, not nested lists")
        if self.inplace and self.array == "jax":
            raise Unsupported("jax arrays are immutable: nothing can be computed in place")
        perm = AXES.get(self.layout, (0, 1, 2))
        values = [np.asarray(x, dtype=np.float64).transpose(perm)]
        names = ["x"]
        if self.layout == "vllm":  # heads flattened: (tokens, heads * dim)
            values = [values[0].reshape(len(x), -1), np.asarray(key, dtype=np.float64).reshape(len(key), -1)]
            names = ["query", "key"]
        axis = perm.index(2) if self.layout in AXES else 1
        try:
            views, buffer, regions = arrays.stored(values, self.array, e.dtype, self.device, storage, axis)
        except ValueError as err:
            raise Unsupported(str(err)) from None
        buffers = buffer if isinstance(buffer, list) else [buffer]
        before = [arrays.snapshot(b, self.array) for b in buffers]
        pos = self._native(np.zeros((1, 1)), np.asarray(positions, dtype=np.int64), e)[1]
        cu = None if cu_seqlens is None else self._native(np.zeros((1, 1)), np.asarray(cu_seqlens, dtype=np.int64), e)[1]
        ints = [(n, v, arrays.snapshot(v, self.array)) for n, v in (("positions", pos), ("cu_seqlens", cu)) if v is not None]
        if self.layout == "vllm":
            out = self._call("forward(positions, query, key)", fn, pos, *views)
        elif self.layout == "thd":
            out = self._call("f(x, positions, cu_seqlens=...)", lambda: fn(views[0], pos, cu_seqlens=cu))
        else:
            out = self._call(f"f(x, positions) ({self.layout})", fn, views[0], pos)
        got = {"mutated": None, "outside": None}
        if self.inplace:
            outs = views
            if regions is not None and arrays.written_outside(buffers[0], before[0], regions, self.array):
                got["outside"] = (f"the in-place call wrote outside its argument{'s' * (len(views) > 1)}: into the "
                                  f"{'fused buffer' if storage == 'fused' else 'memory'} around "
                                  f"{' and '.join(names)} ({storage} storage)")
        else:
            if self.layout == "vllm":
                if not isinstance(out, (tuple, list)) or len(out) != 2:
                    raise Fault(f"returned {type(out).__name__}, expected a pair (query, key)", "shape")
                outs = list(out)
            else:
                outs = [out]
            changed = [n for n, b, k in zip(names, buffers, before) if not arrays.same(b, k, self.array)]
            got["mutated"] = changed[0] if changed else None
        got["mutated"] = got["mutated"] or next((n for n, v, k in ints if not arrays.same(v, k, self.array)), None)
        inverse = np.argsort(perm)
        res = [self._rows(o, e, v.shape).reshape(v.shape) for o, v in zip(outs, values)]
        if self.layout == "vllm":
            got["out"], got["key"] = (r.reshape(len(r), -1, e.head_dim) for r in res)
        else:
            got["out"] = res[0].transpose(inverse)
        got["dtype"] = arrays.native_dtype(outs[0], self.array)
        return got

    def op_kernel(self, fn, e: Expect, x, cos, sin):
        """kernel(x, cos, sin) with the table per pair (n, rotary_dim/2) as given, or spread per dim as the kernel
        declares (``kernel.table``): (float64 result, which argument it wrote into)."""
        shape = getattr(fn, "table", "dim")
        if shape not in TABLE_SHAPES:
            raise Fault(f"declares table = {shape!r}; a kernel takes its cos/sin per 'dim' (the default) or per "
                        f"'pair'", "shape")
        if shape == "dim":
            _, _, oa, ob = e.pair_index()
            cos, sin = (_per_dim(t, oa, ob, e.rotary_dim) for t in (cos, sin))
        zeros = np.zeros(len(x), dtype=np.int64)
        nx, nc, ns = (self._native(v, zeros, e)[0] for v in (x, cos, sin))
        keep = [arrays.snapshot(v, self.array) for v in (nx, nc, ns)]
        out = self._call("kernel(x, cos, sin)", fn, nx, nc, ns)
        mutated = next((name for name, v, k in zip(("x", "cos", "sin"), (nx, nc, ns), keep)
                        if not arrays.same(v, k, self.array)), None)
        return self._rows(out, e, tuple(np.shape(x))), mutated

    def op_table(self, fn, e: Expect, positions):
        """table(positions) -> (cos, sin): each (n, rotary_dim/2), one value per pair, or (n, rotary_dim), one per
        dim, whose two dims of every pair must agree bit for bit; handed back per pair as float64."""
        out = self._call("table(positions)", fn, self._positions(positions, e))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise Fault(f"returned {type(out).__name__}, expected a pair (cos, sin)", "shape")
        n, k = len(positions), e.rotary_dim // 2
        got = []
        for name, t in zip(("cos", "sin"), out):
            shape = tuple(np.shape(t))
            if shape not in ((n, k), (n, 2 * k)):
                raise Fault(f"returned {name} of shape {shape}, expected ({n}, {k}) (one value per pair) or "
                            f"({n}, {2 * k}) (one per dim)", "shape")
            got.append(self._rows(t, e, shape))
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

    def op_qk(self, fn, e: Expect, q, k, cos, sin):
        """apply(q, k, cos, sin) as transformers calls it: q (b, h_q, s, d), k (b, h_kv, s, d), cos and sin given per
        pair (b, s, rotary_dim/2) and handed over per dim (b, s, rotary_dim), or per pair when the function says
        ``table = "pair"`` (GPT-OSS): (q_embed, k_embed) as float64."""
        shape = getattr(fn, "table", "dim")
        if shape not in TABLE_SHAPES:
            raise Fault(f"declares table = {shape!r}; apply takes its cos/sin per 'dim' (the default) or per 'pair'",
                        "shape")
        if shape == "dim":
            _, _, oa, ob = e.pair_index()
            b, s_ = cos.shape[:2]
            cos, sin = (_per_dim(t.reshape(b * s_, -1), oa, ob, e.rotary_dim).reshape(b, s_, -1) for t in (cos, sin))
        if self.array == "list":
            raise Unsupported("the qk form takes 4-d numpy arrays or torch tensors, not nested lists")
        native = [self._native(v.reshape(-1, v.shape[-1]), np.zeros(1, np.int64), e)[0] for v in (q, k, cos, sin)]
        shaped = [v.reshape(t.shape) for v, t in zip(native, (q, k, cos, sin))]
        out = self._call("apply(q, k, cos, sin)", fn, *shaped)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise Fault(f"returned {type(out).__name__}, expected a pair (q_embed, k_embed)", "shape")
        return self._rows(out[0], e, tuple(q.shape)), self._rows(out[1], e, tuple(k.shape))

    def op_prefill(self, fn, e, x, positions, rows=None):
        nx, npos = self._native(x, positions, e)
        return _some(self._call("prefill", fn.prefill, nx, npos), rows, lambda out, r: self._rows(out, e, (len(x), e.head_dim), r))

    def op_step(self, fn, e, x, position, rows=None):
        nx, _ = self._native(x, np.array([position]), e)
        return _some(self._call("step", fn.step, nx, int(position)), rows,
                     lambda out, r: self._rows(out, e, (position + 1, e.head_dim), r))

    def op_pe(self, fn, e, positions):
        out = self._call("pe(positions, d)", fn, self._positions(positions, e), e.head_dim)
        return self._rows(out, e, (len(positions), e.head_dim))

    def op_lookup(self, fn, e, positions):
        out = self._call("table(positions)", fn, self._positions(positions, e))
        return self._rows(out, e, (len(positions), e.head_dim))

    def _qkv(self, e, q, k, v, positions):
        pos = np.asarray(positions, dtype=np.int64)
        nq, npos = self._native(q, pos, e)
        return nq, self._native(k, pos, e)[0], self._native(v, pos, e)[0], npos

    def op_attend(self, fn, e, q, k, v, positions, causal):
        nq, nk, nv, npos = self._qkv(e, q, k, v, positions)
        out = self._call("attend(q, k, v, positions, causal)", fn, nq, nk, nv, npos, causal)
        return self._rows(out, e, (len(positions), e.n_heads * e.head_dim))

    def op_attend_prefill(self, fn, e, q, k, v, positions):
        nq, nk, nv, npos = self._qkv(e, q, k, v, positions)
        return self._rows(self._call("prefill", fn.prefill, nq, nk, nv, npos), e, (len(positions), e.head_dim))

    def op_attend_step(self, fn, e, q, k, v, position):
        nq, nk, nv, _ = self._qkv(e, q, k, v, np.array([position]))
        return self._rows(self._call("step", fn.step, nq, nk, nv, int(position)), e, (1, e.head_dim))

    def op_grad(self, fn, e, x, positions, g):
        """d<f(x, p), g>/dx through torch autograd; NotImplementedError when f does not support it."""
        torch = arrays.torch_module()
        if torch is None or self.array != "torch":
            raise NotImplementedError("autograd is checked for torch implementations (--array torch)")
        if self.layout != "nd" or self.inplace:
            raise NotImplementedError("autograd is checked in the nd layout, out of place")
        dtype = getattr(torch, e.dtype)
        xt = torch.tensor(x, dtype=dtype, device=self.device, requires_grad=True)
        out = self._call("f(x, positions)", fn, xt, torch.tensor(positions, device=self.device))
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            raise NotImplementedError("the implementation does not support autograd")
        try:
            out.backward(torch.tensor(g, dtype=dtype, device=self.device))
        except Exception as err:
            raise Fault(f"backward raised {type(err).__name__}: {err}", "exception") from None
        return xt.grad.detach().to("cpu", torch.float64).numpy()

    def op_parameters(self, fn, e):
        """A learned table's parameter count (num_parameters, or the size of weight); None if neither."""
        count = getattr(fn, "num_parameters", None)
        if count is None and hasattr(fn, "weight"):
            count = int(np.size(fn.weight))
        return None if count is None else int(count)


#: how each operation's call reads in a message
def _per_dim(table: np.ndarray, oa, ob, r: int) -> np.ndarray:
    """A per-pair table (n, r/2) spread onto (n, r): pair i's value at both of its output dims."""
    out = np.empty((len(table), r))
    out[:, oa], out[:, ob] = table, table
    return out


def _some(out, rows, convert):
    """Every key (rows None), or only ``rows`` of them as contract.Keys; ``convert(out, rows)`` checks the whole
    result (kind, dtype, shape) and converts the rows asked for."""
    if rows is None:
        return convert(out, None)
    from implementations.contract import Keys

    values = convert(out, rows)  # raises a Fault unless the shape is the one expected
    return Keys(len(out), rows, values)


OP_NAMES = {"call": "f(x, positions)", "prefill": "prefill", "step": "step", "pe": "pe(positions, d)",
            "lookup": "table(positions)", "attend": "attend(q, k, v, positions, causal)",
            "attend_prefill": "prefill", "attend_step": "step", "grad": "f(x, positions) with autograd",
            "parameters": "the table's parameter count", "kernel": "kernel(x, cos, sin)",
            "table": "table(positions)", "qk": "apply(q, k, cos, sin)", "layout": "f(x, positions) in its layout"}


class Watchdog:
    """In-process only: runs calls with a time limit in a daemon thread. A call past the limit is a
    ``timeout`` Fault; Python cannot stop the thread, so every later call fails at once rather than
    hang again (this is why implementations run in a worker process whenever they can)."""

    def __init__(self, timeout: float | None):
        self.timeout = timeout
        self.hung: str | None = None

    def run(self, what: str, fn: Callable, *args):
        if self.hung:
            raise Fault(f"not called: an earlier call did not return ({self.hung}); the implementation runs "
                        "in-process, where a hung call cannot be stopped", "timeout")
        if not self.timeout:
            return fn(*args)
        box: dict = {}

        def target():
            try:
                box["value"] = fn(*args)
            except BaseException as e:  # handed to the caller's thread
                box["error"] = e

        t = threading.Thread(target=target, daemon=True, name="ropespec-call")
        t.start()
        t.join(self.timeout)
        if t.is_alive():
            self.hung = f"{what} ran past {self.timeout:g} s"
            raise Fault(f"{what} did not return within {self.timeout:g} s (--timeout)", "timeout")
        if "error" in box:
            raise box["error"]
        return box["value"]


class InProcessHost:
    """A Host in the caller's own process (for callables no other process can load). It has the same
    interface as :class:`implementations.isolation.WorkerHost`; its timeouts are a daemon thread's."""

    def __init__(self, obj: Callable, label: str, *, kind: str, array: str, device: str, timeout: float | None,
                 warmup_timeout: float | None, why: str, layout: str = "nd", inplace: bool = False,
                 pipeline: tuple[str, Any] | None = None):
        self.obj = obj
        self.pipeline = pipeline
        self.label = label
        self.kind = kind
        self.layout = layout
        self.inplace = inplace
        self.array = array
        self.device = device
        self.why = why
        self.watchdog = Watchdog(timeout)
        self.warmup_timeout = warmup_timeout
        self.host: Host | None = None
        self.warmup_seconds: float | None = None
        self.output = None

    def load(self, dtype: str) -> dict:
        if self.pipeline:  # --form kernel|qk --table TARGET (a TARGET string or the table builder itself)
            form, table = self.pipeline
            tobj = resolve({"target": table} if isinstance(table, str) else table) if isinstance(table, (str, dict)) else table
            self.obj = pipeline(self.obj, tobj, form, self.label, table if isinstance(table, str) else repr(table))
        info = describe_loaded(self.obj, self.layout if self.layout in ("vllm", "thd") else self.kind, self.label)
        info["skip_reason"] = arrays.unsupported_reason(self.array, dtype, self.device)
        info["load_seconds"] = 0.0
        if info["mode"]:
            self.host = Host(self.obj, info["mode"], self.array, self.device, self.kind, self.layout, self.inplace)
            self.host.in_worker = False
        return info

    def bind(self, hid: int, expect: Expect, fresh: bool = False) -> dict:
        budget = self.warmup_timeout if self.warmup_seconds is None else self.watchdog.timeout
        return self._run("factory", lambda: self.host.bind(hid, expect), budget)

    def op(self, hid: int, name: str, *args):
        if self.warmup_seconds is None:  # the warm-up call, on its own budget
            t0 = time.perf_counter()
            self._run("the warm-up call", lambda: self.host.warmup(hid), self.warmup_timeout)
            self.warmup_seconds = time.perf_counter() - t0
        return self._run(OP_NAMES.get(name, name), lambda: self.host.op(hid, name, args), self.watchdog.timeout)

    def _run(self, what: str, fn, budget: float | None):
        saved, self.watchdog.timeout = self.watchdog.timeout, budget
        try:
            return self.watchdog.run(what, fn)
        finally:
            self.watchdog.timeout = saved

    def close(self) -> None:
        pass
