"""The plug-in contract: how an implementation under test is found, built and called.

Two modes, told apart by the signature of the object TARGET names:

* plain function ``f(x, positions)``: ``x`` is an (n, head_dim) array, ``positions`` an (n,)
  int64 array; it returns an array of the same shape. It is checked against one expectation
  (``--expect``, or the default one).
* factory ``make(expect) -> f``: the suite builds ``f`` for each expectation it draws (head dims,
  bases, both pairings, partial rotary) or for the one given. A factory raises
  ``NotImplementedError`` for what it does not support; that is reported as skipped.

TARGET is ``path/to/file.py:name`` or ``package.module:name``. ``x`` arrives as a numpy array in
the expectation's dtype, a torch tensor (``array="torch"``) or nested lists (``array="list"``).
Every call goes through :meth:`Bound.__call__`, which turns exceptions, wrong types and wrong
shapes into a :class:`Fault` that carries its diagnosis.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from implementations import arrays
from spec.expectation import Expect


class TargetError(Exception):
    """TARGET cannot be loaded or is not callable the way the contract says (one line)."""


class Unsupported(Exception):
    """The implementation declines this expectation (its factory raised NotImplementedError)."""


class Failure(AssertionError):
    """A check failed. ``diagnosis`` is a word from the fixed vocabulary, or None."""

    def __init__(self, message: str, diagnosis: str | None = None, ratio: float | None = None):
        super().__init__(message)
        self.message = message
        self.diagnosis = diagnosis
        self.ratio = ratio


class Fault(Failure):
    """The implementation misbehaved as a program: raised, returned the wrong kind or shape."""


def _where(exc: BaseException) -> str:
    """file:line of the innermost frame of the exception that lies outside this package."""
    here = str(Path(__file__).resolve().parent)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(here)]
    if not frames:
        return ""
    f = frames[-1]
    return f" at {Path(f.filename).name}:{f.lineno}"


def _load_module(mod: str):
    if mod.endswith(".py") or "/" in mod or "\\" in mod:
        path = Path(mod)
        if not path.is_file():
            raise TargetError(f"{mod}: no such file")
        name = f"_ropespec_target_{abs(hash(str(path.resolve())))}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            del sys.modules[name]
            raise TargetError(f"{mod}: import failed: {type(e).__name__}: {e}{_where(e)}") from None
        return module
    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and mod.startswith(e.name):
            raise TargetError(f"{mod}: no such module") from None
        raise TargetError(f"{mod}: import failed: ModuleNotFoundError: {e}") from None
    except Exception as e:
        raise TargetError(f"{mod}: import failed: {type(e).__name__}: {e}{_where(e)}") from None


def _mode_of(obj: Callable) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "plain"
    required = [
        p
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(required) == 1:
        return "factory"
    if len(required) >= 2:
        return "plain"
    raise TargetError(f"must take (x, positions) or (expect); its signature is {sig}")


@dataclass(frozen=True)
class Target:
    """A loaded TARGET: the object and how to call it."""

    spec: str
    obj: Callable
    mode: str  # "plain" | "factory"


def load_target(spec: str) -> Target:
    """Load ``path/to/file.py:name`` or ``package.module:name``; one-line TargetError if impossible."""
    mod, sep, name = spec.rpartition(":")
    if not sep or not mod or not name:
        raise TargetError(f"{spec}: expected path/to/file.py:name or package.module:name")
    module = _load_module(mod)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{spec}: {mod} has no attribute {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetError(f"{spec}: {name} is a {type(obj).__name__}, not callable")
    try:
        mode = _mode_of(obj)
    except TargetError as e:
        raise TargetError(f"{spec}: {e}") from None
    return Target(spec, obj, mode)


@dataclass
class Call:
    """What one call of the implementation produced."""

    out: np.ndarray  # float64 copy of the result
    out_dtype: str  # the dtype the implementation returned
    input_mutated: str | None  # which argument it wrote into, or None


def is_decoder(obj: object) -> bool:
    """Decode mode: a factory's result with ``prefill(x, positions)`` and ``step(x, position)``."""
    return callable(getattr(obj, "prefill", None)) and callable(getattr(obj, "step", None))


DEFAULT_TIMEOUT = 10.0


class Watchdog:
    """Runs implementation calls with a per-call time limit. A call past the limit is reported as a
    ``timeout`` Fault and left running in its daemon thread (Python cannot stop it); every later call
    of the same implementation then fails at once rather than hang again."""

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self.hung: str | None = None

    def run(self, what: str, fn: Callable, *args):
        if self.hung:
            raise Fault(f"not called: an earlier call did not return ({self.hung})", "timeout")
        if not self.timeout:
            return _guarded(what, fn, *args)
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
            e = box["error"]
            if not isinstance(e, Exception) or isinstance(e, Failure):
                raise e
            raise Fault(f"{what} raised {type(e).__name__}: {e}{_where(e)}", "exception") from None
        return box["value"]


def _guarded(what: str, fn: Callable, *args):
    try:
        return fn(*args)
    except Exception as e:
        raise Fault(f"{what} raised {type(e).__name__}: {e}{_where(e)}", "exception") from None


class Bound:
    """An implementation bound to one expectation: call it with float64 rows and int64 positions."""

    def __init__(self, fn: Callable, expect: Expect, array: str, device: str = "cpu", watchdog: Watchdog | None = None):
        self.fn = fn
        self.expect = expect
        self.array = array
        self.device = device
        self.watchdog = watchdog or Watchdog(None)

    def _guarded(self, what: str, fn: Callable, *args):
        return self.watchdog.run(what, fn, *args)

    def prefill(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Decode mode: the keys the decoder attends over after prefilling rows x at positions."""
        nx, npos = arrays.to_native(x, np.asarray(positions, dtype=np.int64), self.array, self.expect.dtype, self.device)
        return self._rows(self._guarded("prefill", self.fn.prefill, nx, npos), len(x))

    def step(self, x: np.ndarray, position: int) -> np.ndarray:
        """Decode mode: the keys after one more row x (shape (1, head_dim)) at ``position``."""
        nx, _ = arrays.to_native(x, np.array([position], dtype=np.int64), self.array, self.expect.dtype, self.device)
        return self._rows(self._guarded("step", self.fn.step, nx, int(position)), position + 1)

    def _positions(self, positions):
        return arrays.to_native(np.zeros((len(positions), 1)), np.asarray(positions, dtype=np.int64), self.array,
                                self.expect.dtype, self.device)[1]

    def pe(self, positions: np.ndarray) -> np.ndarray:
        """Sinusoidal family: pe(positions, d) as float64 (n, d)."""
        out = self._guarded("pe(positions, d)", self.fn, self._positions(positions), self.expect.head_dim)
        return self._rows(out, len(positions))

    def lookup(self, positions: np.ndarray) -> np.ndarray:
        """Learned family: table(positions) as float64 (n, d); raises Fault when the table raises."""
        out = self._guarded("table(positions)", self.fn, self._positions(positions))
        return self._rows(out, len(positions))

    def attend(self, q, k, v, positions, causal: bool) -> np.ndarray:
        """Attention family: attend(q, k, v, positions, causal) as float64 (n, d)."""
        pos = np.asarray(positions, dtype=np.int64)
        nq, npos = arrays.to_native(q, pos, self.array, self.expect.dtype, self.device)
        nk, _ = arrays.to_native(k, pos, self.array, self.expect.dtype, self.device)
        nv, _ = arrays.to_native(v, pos, self.array, self.expect.dtype, self.device)
        out = self._guarded("attend(q, k, v, positions, causal)", self.fn, nq, nk, nv, npos, causal)
        return self._rows(out, len(pos), self.expect.n_heads * self.expect.head_dim)

    def attend_prefill(self, q, k, v, positions) -> np.ndarray:
        """Attention decode mode: the outputs of prefilling rows q, k, v at positions (causal)."""
        pos = np.asarray(positions, dtype=np.int64)
        nq, npos = arrays.to_native(q, pos, self.array, self.expect.dtype, self.device)
        nk, _ = arrays.to_native(k, pos, self.array, self.expect.dtype, self.device)
        nv, _ = arrays.to_native(v, pos, self.array, self.expect.dtype, self.device)
        return self._rows(self._guarded("prefill", self.fn.prefill, nq, nk, nv, npos), len(pos))

    def attend_step(self, q, k, v, position: int) -> np.ndarray:
        """Attention decode mode: the output for one more row (shape (1, head_dim)) at ``position``."""
        pos = np.array([position], dtype=np.int64)
        nq, _ = arrays.to_native(q, pos, self.array, self.expect.dtype, self.device)
        nk, _ = arrays.to_native(k, pos, self.array, self.expect.dtype, self.device)
        nv, _ = arrays.to_native(v, pos, self.array, self.expect.dtype, self.device)
        return self._rows(self._guarded("step", self.fn.step, nq, nk, nv, int(position)), 1)

    def _rows(self, out, n: int, width: int | None = None) -> np.ndarray:
        try:
            return arrays.from_native(out, self.array, (n, width or self.expect.head_dim))
        except arrays.ArrayError as e:
            raise Fault(str(e), "shape") from None


    def call(self, x: np.ndarray, positions: np.ndarray) -> Call:
        positions = np.asarray(positions, dtype=np.int64)
        nx, npos = arrays.to_native(x, positions, self.array, self.expect.dtype, self.device)
        keep_x, keep_p = arrays.snapshot(nx, self.array), arrays.snapshot(npos, self.array)
        out = self._guarded("f(x, positions)", self.fn, nx, npos)
        mutated = None
        if not arrays.same(nx, keep_x, self.array):
            mutated = "x"
        elif not arrays.same(npos, keep_p, self.array):
            mutated = "positions"
        try:
            arr = arrays.from_native(out, self.array, x.shape)
        except arrays.ArrayError as e:
            raise Fault(str(e), "shape") from None
        return Call(arr, arrays.native_dtype(out, self.array), mutated)

    def __call__(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return self.call(x, positions).out


@dataclass
class Subject:
    """One implementation under test at one array kind and dtype.

    ``expect`` is the fixed expectation, or None for a factory whose expectations the suite draws
    (then ``dtype`` and ``max_position`` still hold for every drawn one).
    """

    name: str
    target: str
    mode: str
    obj: Callable
    array: str
    dtype: str
    max_position: int
    expect: Expect | None = None
    device: str = "cpu"
    skip_reason: str | None = None
    kind: str = "rope"  # rope: f(x, positions); decode: prefill/step; sinusoidal: pe(positions, d);
    # learned: table(positions) with max_len = max_position; attention: attend(q, k, v, positions, causal)
    expected_failures: dict = field(default_factory=dict)  # invariant id -> documented reason
    timeout: float | None = DEFAULT_TIMEOUT
    _bound: dict = field(default_factory=dict, repr=False)
    _watchdog: Watchdog | None = field(default=None, repr=False)

    @property
    def watchdog(self) -> Watchdog:
        if self._watchdog is None:
            self._watchdog = Watchdog(self.timeout)
        return self._watchdog

    def fresh(self, expect: Expect) -> Bound:
        """A new decoder for ``expect`` (decode mode keeps state, so every case needs its own)."""
        try:
            obj = self.obj(expect)
        except NotImplementedError as e:
            raise Unsupported(str(e) or "NotImplementedError") from None
        except Exception as e:
            raise Fault(f"factory raised {type(e).__name__}: {e}{_where(e)}", "exception") from None
        return Bound(obj, expect, self.array, self.device, self.watchdog)

    def bind(self, expect: Expect) -> Bound:
        """The callable for ``expect`` (factories are called once per expectation)."""
        if expect not in self._bound:
            if self.mode == "plain":
                self._bound[expect] = Bound(self.obj, expect, self.array, self.device, self.watchdog)
            else:
                try:
                    fn = self.obj(expect)
                except NotImplementedError as e:
                    self._bound[expect] = Unsupported(str(e) or "NotImplementedError")
                except Exception as e:
                    self._bound[expect] = Fault(
                        f"factory raised {type(e).__name__}: {e}{_where(e)}", "exception"
                    )
                else:
                    if is_decoder(fn):
                        self.kind = "attention-decode" if self.kind == "attention" else "decode"
                        self._bound[expect] = Bound(fn, expect, self.array, self.device, self.watchdog)
                    elif not callable(fn):
                        self._bound[expect] = Fault(f"factory returned {type(fn).__name__}, not a function", "shape")
                    else:
                        self._bound[expect] = Bound(fn, expect, self.array, self.device, self.watchdog)
        b = self._bound[expect]
        if isinstance(b, Exception):
            raise b
        return b

    def describe(self) -> str:
        what = self.expect.describe() if self.expect is not None else f"drawn expectations, {self.dtype}"
        where = self.name if self.name == self.target else f"{self.name} = {self.target}"
        return f"{where} ({self.mode}, {self.array} arrays): {what}"
