"""Reading what the user hands over: an expectation (a preset name, inline JSON or a JSON file) and
the implementations."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

from ropespec.implementations import SHIPPED, LoadRequest, arrays, unavailable
from ropespec.implementations.contract import TargetError
from ropespec.implementations.boundary.targets import installed_target
from ropespec.implementations.implementation import Implementation
from ropespec.implementations.shape import CallShape, ShapeError
from ropespec.spec import families, hfconfig, presets
from ropespec.spec.expectation import DEFAULT, DTYPES, Expect, ExpectationError, load_json
from ropespec.spec.schema import near


class UsageError(Exception):
    """Bad usage: one line for the user, exit code 2."""


def shipped(*, expect: Expect | None = None, dtype: str | None = None, notes: list[str] | None = None) -> list:
    """The shipped implementations to check: RoPE only when an expectation is given, those with
    ``dtype`` when given, and none whose array package is not installed (``notes`` says which)."""
    out = []
    for s in SHIPPED:
        if expect is not None and not families.get(s.shape.family).described_by_presets:
            continue  # an expectation given on the command line describes a model's RoPE
        if dtype and dtype not in s.dtypes:
            continue
        missing = unavailable(s.array)
        if missing:
            if notes is not None:
                notes.append(f"not checked: the shipped {s.name} implementation ({missing})")
            continue
        out.append(s)
    return out


def parse_expect(text: str | dict | Expect | None) -> Expect | None:
    """An expectation from what a user handed over (see :func:`_parse_expect`), checked as user input."""
    e = _parse_expect(text)
    return e.checked_input() if e is not None else None


def _parse_expect(text: str | dict | Expect | None) -> Expect | None:
    """An expectation from inline JSON, a dict, a path to a JSON file (ropespec's fields, or a Hugging
    Face config.json, see :mod:`ropespec.spec.hfconfig`), a preset name, or an Expect."""
    if text is None or isinstance(text, Expect):
        return text
    if isinstance(text, dict):
        return Expect.from_dict(text)
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        d = load_json(stripped)
        if isinstance(d, dict) and hfconfig.looks_like_hf_config(d):
            return hfconfig.from_hf_config(d)
        return Expect.from_dict(d)
    path = Path(stripped)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # a name too long, or with a NUL: not a file
        is_file = False
    if is_file:
        try:
            d = load_json(hfconfig.read_text(path, "expect"))
        except ExpectationError as e:
            if e.problem.startswith("not valid JSON"):
                raise ExpectationError("expect", f"{path}: {e.problem}") from None
            raise
        if isinstance(d, dict) and hfconfig.looks_like_hf_config(d):
            return hfconfig.from_hf_config(d)
        return Expect.from_dict(d)
    if stripped in presets.names():
        return presets.get(stripped)
    close = near(stripped, presets.names())
    if close:
        raise ExpectationError("expect", f"{text!r} is no preset; did you mean {close}? (ropespec presets lists them)")
    if path.suffix.lower() == ".json" or any(sep in stripped for sep in "/\\"):
        raise ExpectationError("expect", f"{stripped}: no such file")
    raise ExpectationError("expect", f"{text!r} is not inline JSON, a JSON file or a preset (ropespec presets lists the "
                                     f"{len(presets.names())} presets)")


#: the longest a timeout may be (one day): beyond it a run that hangs is indistinguishable from no limit
MAX_TIMEOUT = 86400.0


def with_rope(expect: Expect | None, family: str, what: str) -> None:
    """A NoPE layer's expectation (``attention_nope``) states no RoPE: only its own family checks it. UsageError, naming
    the key, where ``what`` (a rope run, the precision sweep, a fingerprint, golden data) would check a RoPE of it."""
    block = expect.params("attention") if expect is not None else None
    if block is not None and not block.turns and family != block.family:
        raise UsageError(f"attention_nope: true says the layer turns neither q nor k, so {what} has no RoPE of it to "
                         f"check; --family {block.family} checks a NoPE layer")


def check_seconds(option: str, value: float | None) -> float | None:
    """A timeout option: 0 (no limit) or a finite number of seconds up to a day; UsageError otherwise."""
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
            or not 0 <= value <= MAX_TIMEOUT:
        raise UsageError(f"{option}: must be 0 (no limit) or a number of seconds in (0, {MAX_TIMEOUT:g}], got {value!r}")
    return float(value)


_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?i?b?)\s*", re.I)
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12,
          "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
#: the least memory a worker can start with (an interpreter with numpy imported holds about this much)
MIN_MEMORY = 64 * 10**6


def parse_memory(option: str, value) -> int | None:
    """A memory size: bytes as an int, or text such as '1GB', '512MB', '2GiB' (decimal and binary units); 0 or
    'none' for no limit (returned as 0), None for the default. UsageError otherwise, naming the option and the form."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        text = str(value).strip().lower()
        if text in ("0", "none", "unlimited"):
            return 0
        m = _SIZE.fullmatch(text)
        if not m or m.group(2) not in _UNITS:
            raise UsageError(f"{option}: a size such as 1GB, 512MB or 2GiB (or 0 for no limit), got {value!r}")
        size = int(float(m.group(1)) * _UNITS[m.group(2)])
    if size == 0:
        return 0
    if size < MIN_MEMORY:
        raise UsageError(f"{option}: at least 64MB (an interpreter with numpy needs about that), or 0 for no limit, "
                         f"got {value!r}")
    return size


def parse_replay(text: str | None) -> tuple[str, str] | None:
    """--replay VERSION:BLOB (as a failing run prints it), checked: (version, blob), or None; UsageError otherwise."""
    if not text:
        return None
    version, sep, blob = text.partition(":")
    if not sep or not blob or not re.fullmatch(r"[0-9][0-9a-z.+-]*", version) \
            or not re.fullmatch(r"[A-Za-z0-9+/=]+", blob):
        raise UsageError(f"--replay: expected VERSION:BLOB as printed by a failing run, got {text!r}")
    import hypothesis

    if version != hypothesis.__version__:
        raise UsageError(f"--replay: printed with Hypothesis {version}; this is Hypothesis {hypothesis.__version__}, "
                         f"which cannot read it: rerun with the same --seed instead")
    try:
        from hypothesis.core import decode_failure

        decode_failure(blob.encode())
    except Exception:
        raise UsageError(f"--replay: {blob[:40]!r} is not a blob printed by a failing run (not base64 of "
                         "Hypothesis' compressed choices)") from None
    return version, blob


def call_shape(*, family: str = "rope", form: str = "apply", layout: str = "nd", inplace: bool = False,
               table=None, positions: str = "per-sequence") -> CallShape:
    """How the properties call TARGET, from the options (the command line's and the API's); UsageError when they do
    not fit together."""
    try:
        return CallShape(family, form, layout, inplace, table, positions=positions)
    except ShapeError as e:
        raise UsageError(str(e)) from None


def load_requests(
    targets: list | None,
    *,
    expect: Expect | None = None,
    array: str | None = None,
    dtype: str | None = None,
    max_position: int | None = None,
    device: str = "cpu",
    timeout: float | None = None,
    warmup_timeout: float | None = None,
    shape: CallShape = CallShape(),
    isolate: bool | None = None,
    notes: list[str] | None = None,
    memory_limit=None,
) -> list[LoadRequest]:
    """What to load of each implementation to check (the shipped ones when there are no TARGETs), validated;
    nothing is loaded yet. UsageError on bad input."""
    if array is not None and array not in arrays.ARRAYS:
        raise UsageError(f"--array: unknown {array!r} (known: {', '.join(arrays.ARRAYS)})")
    if dtype is not None and dtype not in DTYPES:
        raise UsageError(f"--dtype: unknown {dtype!r} (known: {', '.join(DTYPES)})")
    timeout = check_seconds("--timeout", timeout)
    warmup_timeout = check_seconds("--warmup-timeout", warmup_timeout)
    if max_position is not None:
        try:
            (expect or DEFAULT).replace(max_position=max_position)
        except ExpectationError as e:
            raise UsageError(f"--max-position: {e.problem}") from None
    if device != "cpu" and not (device == "cuda" or device.startswith("cuda:") and device[5:].isdigit()):
        raise UsageError(f"--device: must be cpu, cuda or cuda:N, got {device!r}")
    with_rope(expect, shape.family, f"a {shape.family} run")
    common = dict(expect=expect, max_position=max_position, device=device, timeout=timeout,
                  warmup_timeout=warmup_timeout, memory_limit=parse_memory("--memory-limit", memory_limit))
    shape = replace(shape, table=_installed(shape.table, "--table", notes))
    targets = [_installed(t, "TARGET", notes) for t in targets or ()]
    if not targets:
        return [LoadRequest(s.target, name=f"{s.name}-{d}", array=s.array, dtype=d, shape=s.shape, **common)
                for s in shipped(expect=expect, dtype=dtype, notes=notes) for d in ((dtype,) if dtype else s.dtypes)]
    return [LoadRequest(t, name=t if isinstance(t, str) else None, array=array or "numpy", dtype=dtype, shape=shape,
                        isolate=isolate, **common) for t in targets]


def _installed(target, what: str, notes: list[str] | None):
    """A TARGET under its installed name (:func:`ropespec.implementations.boundary.targets.installed_target`), the run's notes
    saying the new name where it changed."""
    new = installed_target(target)
    if new != target and notes is not None:
        notes.append(f"{what} {target} is {new}: ropespec's folders install under ropespec")
    return new


def load_implementations(targets: list | None, **kwargs) -> list[Implementation]:
    """Implementations for TARGETs (or the shipped implementations when none), each loaded in its worker
    process; arguments as :func:`load_requests`. UsageError on bad input or a TARGET that does not load."""
    return load_all(load_requests(targets, **kwargs))


def load_all(requests: list[LoadRequest]) -> list[Implementation]:
    """Each request loaded; UsageError when a TARGET does not load."""
    out = []
    try:
        for request in requests:
            out.append(request.load())
    except TargetError as e:
        for s in out:
            s.close()
        raise UsageError(f"TARGET {e}") from None
    return out
