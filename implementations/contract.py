"""The plug-in contract: how an implementation under test is found, built and called.

Two modes, told apart by the signature of the object TARGET names:

* plain function ``f(x, positions)``: ``x`` is an (n, head_dim) array, ``positions`` an (n,)
  int64 array; it returns an array of the same shape. It is checked against one expectation
  (``--expect``, or the default one).
* factory ``make(expect) -> f``: the suite builds ``f`` for each expectation it draws (head dims,
  bases, both conventions, partial rotary) or for the one given. A factory raises
  ``NotImplementedError`` for what it does not support; that is reported as skipped.

TARGET is ``path/to/file.py:name`` or ``package.module:name``. ``x`` arrives as a numpy array in
the expectation's dtype, a torch tensor (``array="torch"``) or nested lists (``array="list"``).
The implementation runs in a worker process that ropespec owns (:mod:`ropespec.implementations.boundary.workers`);
the properties hold :class:`Bound` proxies whose calls cross that boundary with float64 arrays, and
everything the implementation does wrong as a program (raises, exits, crashes, hangs, returns the
wrong kind, dtype or shape) comes back as a :class:`Fault` that carries its word.
"""

from __future__ import annotations

import inspect
import json
import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ropespec.spec.expectation import Expect
from ropespec.spec.glossary import check_word


class TargetError(Exception):
    """TARGET cannot be loaded or is not callable the way the contract says (one line)."""

    def __init__(self, message: str = ""):
        super().__init__(cap(str(message)))


class Unsupported(Exception):
    """The implementation declines this expectation (its factory raised NotImplementedError)."""

    def __init__(self, message: str = ""):
        super().__init__(cap(str(message)))


class DeclinedCase(Unsupported):
    """A door of the implementation declines this one input (it raised NotImplementedError for it: a context-parallel
    builder of one scheme, asked for another): the case is not asked, and the others are; a door the implementation
    lacks altogether is an :class:`Unsupported` of its own."""


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


#: numpy 2's scalar repr, np.float64(0.5), in a failure reads as code: the number is what is meant
_NUMPY_REPR = re.compile(r"np\.(?:float|int|uint|complex)\d*\(([^()]*)\)")

#: a number as a message writes one (an int, a float, a repr in scientific notation, nan, inf)
_NUMBER = r"\s*(?:-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|nan|inf)|True|False)\s*"
#: a flat list of more than LISTED numbers, and a list of more than LISTED_ROWS such rows (a multi-axis call's positions)
LISTED, LISTED_ROWS = 16, 8
_LONG_LIST = re.compile(rf"\[(?:{_NUMBER},){{{LISTED},}}{_NUMBER}\]")
_ROW = rf"\s*\[(?:{_NUMBER},)*{_NUMBER}\]\s*"
_LONG_ROWS = re.compile(rf"\[(?:{_ROW},){{{LISTED_ROWS},}}{_ROW}\]")


def summarised(text: str) -> str:
    """Every long list of numbers in a message summarised: its first entries, its last ones and how many there are
    ('[0, 1, 2, 3, ..., 4094, 4095] (4096 values)'). A message is read by a person, in a terminal line, a JUnit
    file or the JSON's message; the values themselves are the counterexample's, whole in the JSON report."""
    def flat(m: re.Match) -> str:
        items = [v.strip() for v in m.group(0)[1:-1].split(",")]
        return f"[{', '.join(items[:4])}, ..., {', '.join(items[-2:])}] ({len(items)} values)"

    def rows(m: re.Match) -> str:
        items = re.findall(r"\[[^\[\]]*\]", m.group(0)[1:-1])
        return f"[{', '.join(items[:3])}, ..., {items[-1]}] ({len(items)} rows)"

    return _LONG_LIST.sub(flat, _LONG_ROWS.sub(rows, text))


#: the fields of a failure, in the order :func:`render` says them
FAILURE_FIELDS = ("what", "got", "expected", "detail", "call", "diagnosis", "evidence", "follows", "also", "ratio",
                  "cause")


class Failure(AssertionError):
    """A check failed, as a record read by every report and rendered by one function (:func:`render`).

    ``what``: what was observed (the quantity and where, or the whole observation in words); ``got`` and ``expected``:
    its value and the one it should have, where two values are compared; ``detail``: how far apart they are;
    ``call``: the call that showed it. ``diagnosis``: a word from the fixed vocabulary, or None; ``evidence``: what
    was measured that earns the word; ``follows``: the word is a root cause this failure follows from; ``also``: the
    words of the other fields measured wrong, whose evidence follows the root's in ``evidence``. ``ratio``: the
    error as a multiple of its bound. ``cause``: what ended or stalled the implementation's process, where it is
    known ("memory": it ran out of memory), for the engine to act on."""

    def __init__(self, what: str, diagnosis: str | None = None, ratio: float | None = None,
                 cause: str | None = None, *, got: str | None = None, expected: str | None = None,
                 detail: str | None = None, call: str | None = None, evidence: str | None = None,
                 follows: bool = False, also: tuple[str, ...] = ()):
        text = lambda v: None if v is None else _NUMPY_REPR.sub(r"\1", clean(summarised(str(v))))
        self.what, self.got, self.expected, self.detail = text(what), text(got), text(expected), text(detail)
        self.call, self.evidence = text(call), text(evidence)
        self.diagnosis = check_word(diagnosis)
        self.follows = bool(follows)
        self.also = tuple(check_word(w) for w in also or ())
        self.ratio = ratio
        self.cause = cause
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return render(self)

    def __str__(self) -> str:
        return self.message

    def named(self, word: str | None, evidence: str | None = None, *, follows: bool = False, also=(),
              **fields) -> "Failure":
        """This failure with ``word`` and what earns it (``follows``: ``word`` is the root cause it follows from;
        ``also``: the other fields' words), and any other field given (the ``call`` a fault was seen in); the
        observation, its values and its ratio kept."""
        return _rebuild(type(self), self.to_dict() | fields | {"diagnosis": word, "evidence": evidence,
                                                               "follows": follows, "also": tuple(also)})

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in FAILURE_FIELDS}

    @classmethod
    def from_dict(cls, d: dict) -> "Failure":
        """The failure :meth:`to_dict` wrote."""
        return _rebuild(cls, d)

    def __reduce__(self):  # crosses process boundaries whole
        return (_rebuild, (type(self), self.to_dict()))


def _rebuild(cls, d: dict) -> Failure:
    d = {k: d.get(k) for k in FAILURE_FIELDS}
    return cls(d.pop("what") or "", d.pop("diagnosis"), d.pop("ratio"), d.pop("cause"), follows=bool(d.pop("follows")),
               also=tuple(d.pop("also") or ()), **d)


def render(f: Failure) -> str:
    """A failure as one line of text, the same in the terminal, JSON, JUnit and pytest:
    ``what=got, but should be expected: detail [call] -- word: evidence``."""
    text = f.what
    if f.got is not None:
        text += f"={f.got}"
    if f.expected is not None:
        text += f", but should be {f.expected}"
    if f.detail:
        text += f": {f.detail}"
    if f.call:
        text += f" [{f.call}]"
    if f.evidence:
        text += f" -- {'follows from ' if f.follows else ''}{f.diagnosis}: {f.evidence}"
    return text


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
#: the cause of a shape fault whose result is an array of another shape than the contract gives (Failure.cause): at
#: the warm-up call it says ropespec took TARGET for a function it is not
CONTRACT_SHAPE = "contract-shape"


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


def call_signature(obj: Callable) -> inspect.Signature:
    """The signature a call of ``obj`` takes: its own, or, where that is only ``(*args, **kwargs)`` and it has a
    ``forward`` (a torch module instance, whose __call__ hands its arguments to forward), its forward's. ValueError or
    TypeError where there is none to read."""
    sig = inspect.signature(obj)
    kinds = {p.kind for p in sig.parameters.values()}
    forward = getattr(obj, "forward", None)
    if sig.parameters and kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} and \
            callable(forward) and forward is not obj:
        return inspect.signature(forward)
    return sig


def mode_of(obj: Callable) -> str:
    """'factory' (one required argument: make(expect)) or 'plain' (two or more)."""
    try:
        sig = call_signature(obj)
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
#: a call of more rows than this gets --timeout times its rows / this many: a long call (a prefill's 4097 rows) costs
#: what its rows cost (Triton's interpreter runs one program instance per row), and a hang is still one
TIMEOUT_ROWS = 1024


def timeout_scale(args) -> float:
    """How many --timeouts a call with ``args`` gets: its rows (every axis of its largest array but the last) over
    :data:`TIMEOUT_ROWS`, at least 1."""
    import numpy as np

    rows = [int(np.prod(np.shape(a)[:-1])) if np.ndim(a) >= 2 else len(a)
            for a in args if isinstance(a, np.ndarray) and a.size]
    return max(1.0, max(rows, default=0) / TIMEOUT_ROWS)
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
    da, db = (e.fields() | {"rope_scaling": e.to_dict()["rope_scaling"]} for e in (a, b))
    return [f"{k} {json.dumps(da[k])}, not {json.dumps(db[k])}" for k in da
            if k not in JUDGED_BY and k != "partial_rotary_factor" and da[k] != db[k]]


def same_function(a: Expect, b: Expect) -> bool:
    """Two expectations of one and the same function: they differ at most in :data:`JUDGED_BY`."""
    return not function_differences(a, b)
