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
The implementation runs in a worker process that ropespec owns (:mod:`implementations.isolation`);
the properties hold :class:`Bound` proxies whose calls cross that boundary with float64 arrays, and
everything the implementation does wrong as a program (raises, exits, crashes, hangs, returns the
wrong kind, dtype or shape) comes back as a :class:`Fault` that carries its word.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from spec.definitions import rotate
from spec.expectation import Expect


class TargetError(Exception):
    """TARGET cannot be loaded or is not callable the way the contract says (one line)."""

    def __init__(self, message: str = ""):
        super().__init__(cap(str(message)))


class Unsupported(Exception):
    """The implementation declines this expectation (its factory raised NotImplementedError)."""

    def __init__(self, message: str = ""):
        super().__init__(cap(str(message)))


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


#: characters of a message kept at its head and at its tail (what the implementation raised or printed can be any
#: size: a 20 MB exception message once made a 251 MB report)
MESSAGE_KEEP = 4096


def cap(text: str, keep: int = MESSAGE_KEEP) -> str:
    """``text`` with everything beyond its first and last ``keep`` characters cut, and the count of what was cut."""
    if len(text) <= 2 * keep + 64:
        return text
    return f"{text[:keep]} [... {len(text) - 2 * keep} characters cut ...] {text[-keep:]}"


def clean(text: str) -> str:
    """Text safe to print and store whatever the implementation put in it: capped (:func:`cap`), control characters
    (terminal escapes, NUL) and lone surrogates written as backslash escapes."""
    text = cap(text).encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class Failure(AssertionError):
    """A check failed. ``diagnosis`` is a word from the fixed vocabulary, or None. ``cause``: what ended or stalled
    the implementation's process, where it is known ("memory": it ran out of memory), for the engine to act on."""

    def __init__(self, message: str, diagnosis: str | None = None, ratio: float | None = None,
                 cause: str | None = None):
        message = clean(message)
        super().__init__(message)
        self.message = message
        self.diagnosis = diagnosis
        self.ratio = ratio
        self.cause = cause

    def __reduce__(self):  # crosses process boundaries with its word
        return (type(self), (self.message, self.diagnosis, self.ratio, self.cause))


class Fault(Failure):
    """The implementation misbehaved as a program: raised, returned the wrong kind or shape."""


def where(exc: BaseException) -> str:
    """file:line of the innermost frame of the exception in the user's own code: outside this package and, where
    the traceback has such a frame, outside installed libraries (numpy's allocator is not where the user looks)."""
    import sysconfig

    here = str(Path(__file__).resolve().parent)
    libraries = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(here)]
    own = [f for f in frames if not f.filename.startswith(libraries) and not f.filename.startswith("<")]
    if not frames:
        return ""
    f = (own or frames)[-1]
    return f" at {Path(f.filename).name}:{f.lineno}"


def describe_exit(e: SystemExit) -> str:
    """How a SystemExit reads: 'called sys.exit(3)'."""
    return f"called sys.exit({e.code!r})" if e.code is not None else "raised SystemExit"


def describe_status(returncode: int | None) -> str:
    """A dead process's status in words: 'exited with status 3', 'was killed by signal 11 (SIGSEGV)'."""
    import signal

    if returncode is None:
        return "ended"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"was killed by signal {-returncode} ({name})"
    return f"exited with status {returncode}"


#: the cause of a fault that ran out of memory (Failure.cause)
OUT_OF_MEMORY = "memory"


def format_bytes(n: float) -> str:
    """'1.5 GB', '512 MB' (decimal units, as --memory-limit takes them)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def machine_memory() -> int | None:
    """This machine's physical memory in bytes, or None where the system does not say."""
    import os

    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def is_out_of_memory(e: BaseException) -> bool:
    """Whether an exception says an allocation failed: MemoryError (numpy, Python), torch's CPU allocator's
    RuntimeError, or CUDA's OutOfMemoryError."""
    return isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError" or "can't allocate memory" in str(e)


def killed_for_memory(returncode: int | None, peak_rss: int | None, limit: int | None) -> str:
    """What a SIGKILL of a worker says about memory: its peak resident memory, and "likely out of memory" where that
    peak came near the worker's limit or the machine's memory (the kernel's OOM killer sends SIGKILL); "" otherwise."""
    import signal

    if returncode != -signal.SIGKILL or not peak_rss:
        return ""
    said = f"; its peak resident memory was {format_bytes(peak_rss)}"
    machine = machine_memory()
    if limit and peak_rss >= 0.25 * limit:
        return f"{said}, near its --memory-limit of {format_bytes(limit)}: likely out of memory (the kernel's OOM killer sends SIGKILL)"
    if machine and peak_rss >= 0.25 * machine:
        return (f"{said} of the machine's {format_bytes(machine)}: likely out of memory (the kernel's OOM killer sends "
                f"SIGKILL; --memory-limit caps each worker below it)")
    return said


def mode_of(obj: Callable) -> str:
    """'factory' (one required argument: make(expect)) or 'plain' (two or more)."""
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


@dataclass
class Keys:
    """Some of the keys a decoder returned: how many it returned, which rows these are, and their values."""

    length: int
    rows: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return self.length


@dataclass
class Call:
    """What one call of the implementation produced."""

    out: np.ndarray  # float64 copy of the result
    out_dtype: str  # the dtype the implementation returned
    input_mutated: str | None  # which argument it wrote into, or None


def is_decoder(obj: object) -> bool:
    """Decode mode: a factory's result with ``prefill(x, positions)`` and ``step(x, position)``."""
    return callable(getattr(obj, "prefill", None)) and callable(getattr(obj, "step", None))


#: seconds one call of the implementation may take (--timeout)
DEFAULT_TIMEOUT = 10.0
#: seconds the warm-up may take: loading the TARGET, the first factory call and the first call in a
#: fresh worker process (imports, JIT compilation, autotuning; --warmup-timeout)
DEFAULT_WARMUP_TIMEOUT = 300.0
#: the words of a fault that ended or stalled the process running the implementation: the property
#: stops at the case that caused it (each further case could cost a whole timeout)
FATAL = ("timeout", "crash")
#: properties that may time out on one implementation before the rest of its properties are not run: a target that
#: hangs on its third call hung again in every property, each after a fresh worker's warm-up and a whole --timeout
MAX_TIMEOUTS = 3


#: fields in which two expectations of one and the same function may differ: how far to test and the precision
#: promised (a plain function computes one expectation; these only say how it is judged)
JUDGED_BY = ("max_position", "angle_dtype", "inv_freq_dtype")


def function_differences(a: Expect, b: Expect) -> list[str]:
    """The fields (beyond :data:`JUDGED_BY`) in which ``a`` asks for another function than ``b``, each as
    'field: a's value, not b's'; empty when both describe one and the same function."""
    da, db = ({f.name: getattr(e, f.name) for f in dataclasses.fields(e)} | {"rope_scaling": e.to_dict()["rope_scaling"]}
              for e in (a, b))
    return [f"{k} {json.dumps(da[k])}, not {json.dumps(db[k])}" for k in da
            if k not in JUDGED_BY and k != "partial_rotary_factor" and da[k] != db[k]]


def same_function(a: Expect, b: Expect) -> bool:
    """Two expectations of one and the same function: they differ at most in :data:`JUDGED_BY`."""
    return not function_differences(a, b)


class Bound:
    """An implementation bound to one expectation, as the properties see it: every method takes and
    returns float64 numpy arrays. The calls themselves happen in the subject's host (a worker process,
    see :mod:`implementations.isolation`), which converts, checks and reports what came back."""

    def __init__(self, host, hid: int, expect: Expect, array: str, device: str = "cpu"):
        self.host = host
        self.hid = hid
        self.expect = expect
        self.array = array
        self.device = device

    def _op(self, name: str, *args):
        return self.host.op(self.hid, name, *args)

    def call(self, x: np.ndarray, positions: np.ndarray) -> Call:
        out, dtype, mutated = self._op("call", np.asarray(x, dtype=np.float64), np.asarray(positions, dtype=np.int64))
        return Call(out, dtype, mutated)

    def __call__(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return self.call(x, positions).out

    def table(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Table form: table(positions) -> (cos, sin), each (n, rotary_dim/2) float64, one value per pair (a
        per-dim table is checked for its duplicated dims and reduced in the worker)."""
        return self._op("table", np.asarray(positions, dtype=np.int64))

    def rotate_by_table(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The RoPE the table defines, f(x, p) = R(table(p)) x (spec.definitions.rotate in float64): what the
        diagnoses, the fingerprint and the precision sweep measure."""
        c, s = self.table(positions)
        a, b, oa, ob = self.expect.pair_index()
        x = np.asarray(x, dtype=np.float64)
        out = x.copy()
        out[:, oa], out[:, ob] = rotate(x[:, a], x[:, b], c, s)
        return out

    def rotate_by_kernel(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """A kernel or qk function as f(x, p): x rotated by the kernel with ropespec's exactly rounded table
        (spec.angles.rounded_table), one head, one batch row (what the fingerprint probes: the pairing, direction
        and rotary dims are the kernel's, the frequencies the table's)."""
        from spec.angles import rounded_table

        c, s = rounded_table(self.expect, positions)
        if getattr(self.host, "kind", "kernel") == "qk":
            x4 = np.asarray(x, dtype=np.float64)[None, None]
            return self.qk(x4, x4, c[None], s[None])[0].reshape(np.shape(x))
        return self.kernel(x, c, s).out

    def qk(self, q: np.ndarray, k: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """qk form: transformers' apply(q, k, cos, sin) with q (b, h_q, s, d), k (b, h_kv, s, d) and the table per
        pair (b, s, rotary_dim/2), spread per dim in the worker: (q_embed, k_embed) as float64."""
        return self._op("qk", *(np.asarray(v, dtype=np.float64) for v in (q, k, cos, sin)))

    def kernel(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> Call:
        """Kernel form: kernel(x, cos, sin) with one cos and one sin per pair, shape (n, rotary_dim/2) (spread
        per dim in the worker when the kernel declares ``table = "dim"``)."""
        out, mutated = self._op("kernel", *(np.asarray(v, dtype=np.float64) for v in (x, cos, sin)))
        return Call(out, self.expect.dtype, mutated)

    def layout(self, x: np.ndarray, positions: np.ndarray, cu_seqlens=None, storage: str = "contiguous",
               key: np.ndarray | None = None) -> dict:
        """One call in the subject's layout with x in canonical axes (batch, seq, head, dim), or (tokens, head,
        dim) for thd and vllm, stored as ``storage`` (implementations.host.Host.op_layout)."""
        return self._op("layout", np.asarray(x, dtype=np.float64), np.asarray(positions, dtype=np.int64),
                        None if cu_seqlens is None else np.asarray(cu_seqlens, dtype=np.int64), storage,
                        None if key is None else np.asarray(key, dtype=np.float64))

    def prefill(self, x: np.ndarray, positions: np.ndarray, rows: np.ndarray | None = None):
        """Decode mode: the keys the decoder attends over after prefilling rows x at positions (with
        ``rows``: only those rows come back, as :class:`Keys`)."""
        return self._op("prefill", np.asarray(x, dtype=np.float64), np.asarray(positions, dtype=np.int64),
                        None if rows is None else np.asarray(rows, dtype=np.int64))

    def step(self, x: np.ndarray, position: int, rows: np.ndarray | None = None):
        """Decode mode: the keys after one more row x (shape (1, head_dim)) at ``position`` (with ``rows``:
        only those rows come back, as :class:`Keys`: a decoder returns every key at every step, and
        sending all of them across the process boundary made a 4096-token decode cost O(n^2) bytes)."""
        return self._op("step", np.asarray(x, dtype=np.float64), int(position),
                        None if rows is None else np.asarray(rows, dtype=np.int64))

    def pe(self, positions: np.ndarray) -> np.ndarray:
        """Sinusoidal family: pe(positions, d) as float64 (n, d)."""
        return self._op("pe", np.asarray(positions, dtype=np.int64))

    def lookup(self, positions: np.ndarray) -> np.ndarray:
        """Learned family: table(positions) as float64 (n, d); raises Fault when the table raises."""
        return self._op("lookup", np.asarray(positions, dtype=np.int64))

    def attend(self, q, k, v, positions, causal: bool) -> np.ndarray:
        """Attention family: attend(q, k, v, positions, causal) as float64 (n, n_heads * head_dim)."""
        return self._op("attend", q, k, v, np.asarray(positions, dtype=np.int64), bool(causal))

    def attend_prefill(self, q, k, v, positions) -> np.ndarray:
        """Attention decode mode: the outputs of prefilling rows q, k, v at positions (causal)."""
        return self._op("attend_prefill", q, k, v, np.asarray(positions, dtype=np.int64))

    def attend_step(self, q, k, v, position: int) -> np.ndarray:
        """Attention decode mode: the output for one more row (shape (1, head_dim)) at ``position``."""
        return self._op("attend_step", q, k, v, int(position))

    def grad(self, x: np.ndarray, positions: np.ndarray, g: np.ndarray) -> np.ndarray:
        """torch autograd: d<f(x, p), g>/dx; NotImplementedError when f does not support autograd."""
        return self._op("grad", np.asarray(x, dtype=np.float64), np.asarray(positions, dtype=np.int64),
                        np.asarray(g, dtype=np.float64))

    def parameters(self) -> int | None:
        """Learned family: the table's parameter count (num_parameters or the size of weight)."""
        return self._op("parameters")


@dataclass
class Subject:
    """One implementation under test at one array kind and dtype, and the host it runs in.

    ``expect`` is the fixed expectation, or None for a factory whose expectations the suite draws
    (then ``dtype`` and ``max_position`` still hold for every drawn one). ``load_fault`` is set when
    loading the TARGET ended or stalled its process: every property then fails with it.
    """

    name: str
    target: str
    mode: str
    array: str
    dtype: str
    max_position: int
    expect: Expect | None = None
    device: str = "cpu"
    skip_reason: str | None = None
    kind: str = "rope"  # rope: f(x, positions); decode: prefill/step; kernel: kernel(x, cos, sin); table:
    # table(positions) -> (cos, sin); sinusoidal: pe(positions, d);
    # learned: table(positions) with max_len = max_position; attention: attend(q, k, v, positions, causal)
    layout: str = "nd"  # how an apply function takes its rows (implementations.host.LAYOUTS; vllm: --form vllm)
    inplace: bool = False  # it writes its result into x (the result is x after the call)
    #: (form, table TARGET): a kernel or qk function checked with its library's table as one apply function
    pipeline: tuple[str, str] | None = None
    expected_failures: dict = field(default_factory=dict)  # invariant id -> documented reason
    promise: dict = field(default_factory=dict)  # a factory's own precision class (make.promise), drawn with
    timeout: float | None = DEFAULT_TIMEOUT
    warmup_timeout: float | None = DEFAULT_WARMUP_TIMEOUT
    isolation: str = "worker process"  # or "in-process (<why>)"
    load_fault: Fault | None = None
    #: why no further property runs on this implementation (it ran out of memory: each would do so again), or None
    halted: str | None = None
    #: processes the code under test left running (a detached child), stopped with its worker
    left_behind: list = field(default_factory=list)
    #: the properties in which a call timed out (after MAX_TIMEOUTS of them the rest is not run)
    timed_out: list = field(default_factory=list)
    host: object = field(default=None, repr=False)
    _bound: dict = field(default_factory=dict, repr=False)
    _next: int = field(default=0, repr=False)

    def __getstate__(self):  # what crosses from a -j runner to the main process: no host, no handles
        state = dict(self.__dict__)
        state.update(host=None, _bound={}, _warmup=self.warmup_seconds, _output=self.output())
        return state

    def _new_handle(self) -> int:
        self._next += 1
        return self._next

    def _build(self, expect: Expect, fresh: bool) -> Bound:
        if self.load_fault is not None:
            raise Fault(f"not run: {self.load_fault.message}", self.load_fault.diagnosis)
        hid = self._new_handle()
        info = self.host.bind(hid, expect, fresh)
        if info.get("decoder"):
            self.kind = "attention-decode" if self.kind in ("attention", "attention-decode") else "decode"
        return Bound(self.host, hid, expect, self.array, self.device)

    def fresh(self, expect: Expect) -> Bound:
        """A new decoder for ``expect`` (decode mode keeps state, so every case needs its own)."""
        return self._build(expect, fresh=True)

    def bind(self, expect: Expect) -> Bound:
        """The callable for ``expect`` (factories are called once per expectation). A plain function
        computes its one expectation: bound to any other (beyond how far to test and the precision class
        promised) it is :class:`Unsupported`, so no property can silently check it against another."""
        if self.mode == "plain" and self.expect is not None and not same_function(expect, self.expect):
            raise Unsupported(f"a plain function computes one expectation ({self.expect.describe()}); checking it "
                              f"under another ({'; '.join(function_differences(expect, self.expect))}) needs a "
                              f"factory make(expect)")
        if expect not in self._bound:
            try:
                self._bound[expect] = self._build(expect, fresh=False)
            except (Unsupported, Fault) as e:  # a factory that hung or crashed on it is not asked again
                self._bound[expect] = e
        b = self._bound[expect]
        if isinstance(b, Exception):
            raise b
        return b

    def function(self, expect: Expect):
        """The implementation as one function f(x, positions) for ``expect`` (fingerprint, precision): the
        bound function, or for a decode-mode factory a fresh decoder prefilled with the rows at each call."""
        f = self.bind(expect)
        if self.kind == "table":
            return f.rotate_by_table
        if self.kind in ("kernel", "qk"):
            return f.rotate_by_kernel
        if self.kind not in ("decode", "attention-decode"):
            return f
        return lambda x, positions: self.fresh(expect).prefill(x, positions)

    @property
    def warmup_seconds(self) -> float | None:
        return getattr(self.host, "warmup_seconds", None) if self.host is not None else self.__dict__.get("_warmup")

    def output(self):
        """What the implementation printed (a :class:`~implementations.isolation.Captured`), or None."""
        return getattr(self.host, "output", None) if self.host is not None else self.__dict__.get("_output")

    def close(self) -> None:
        """Stop the host's worker process (a later call starts a fresh one)."""
        if self.host is not None:
            self.__dict__["_warmup"] = self.warmup_seconds
            self.__dict__["_output"] = self.output()
            self.host.close()
            self.left_behind = list(getattr(self.host, "left_behind", None) or [])

    def describe(self) -> str:
        what = self.expect.describe() if self.expect is not None else f"drawn expectations, {self.dtype}"
        where_ = self.name if self.name == self.target else f"{self.name} = {self.target}"
        shape = "" if self.layout == "nd" else f", {self.layout} layout" if self.layout != "vllm" else ", vLLM's forward"
        if self.pipeline:
            shape += f", --form {self.pipeline[0]} with --table {self.pipeline[1]}"
        return f"{where_} ({self.mode}, {self.array} arrays{shape}{', in place' * self.inplace}): {what}"
