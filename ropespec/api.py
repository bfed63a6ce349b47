"""The Python API: :func:`check` and :func:`fingerprint`, taking what the command line takes."""

from __future__ import annotations

import random

from ropespec.properties.profiles import DEFAULT_PROFILE
from ropespec.engine import check_implementations, select_properties
from ropespec.properties.fingerprint import fingerprint as _fingerprint
from ropespec.inputs import load_implementations, call_shape, parse_expect, parse_replay
from ropespec.results import CheckResult
from ropespec.spec import DEFAULT


def check(
    fn,
    expect=None,
    *,
    array: str | None = None,
    dtype: str | None = None,
    max_position: int | None = None,
    profile: str | None = None,
    seed: int | None = None,
    invariants: list[str] | None = None,
    timeout: float | None = 10.0,
    warmup_timeout: float | None = 300.0,
    device: str = "cpu",
    family: str = "rope",
    allow_skip: bool = False,
    isolate: bool | None = None,
    form: str = "apply",
    layout: str = "nd",
    inplace: bool = False,
    table=None,
    positions: str = "per-sequence",
    memory_limit=None,
    replay: str | None = None,
) -> CheckResult:
    """Check ``fn`` — a function f(x, positions), a factory make(expect), or a TARGET string — against
    every invariant (or ``invariants``). ``expect`` is a preset name, a dict, JSON, a config.json path or
    an :class:`~spec.Expect`. The command line is a thin layer over this function.

    ``fn`` runs in a worker process of its own (a TARGET string, or a function its module names); a
    callable no other process can load (a lambda, a closure, a function defined in ``__main__``) runs
    in-process, and the report's header says so (``isolate=False`` forces in-process). ``timeout``:
    seconds per call; ``warmup_timeout``: seconds for the import, the factory and the first call. ``form``,
    ``layout``, ``inplace``, ``table`` and ``positions`` are the command line's --form, --layout, --inplace, --table
    (a TARGET string or the table builder itself) and --positions (a packed call's: per-sequence or per-token); ``memory_limit`` is --memory-limit (bytes, or text such as "1GB"; 0:
    none; default: half the machine's memory); ``replay`` is --replay VERSION:BLOB, as a failure prints it."""
    blob = parse_replay(replay)
    impls = load_implementations([fn], expect=parse_expect(expect), array=array, dtype=dtype,
                              max_position=max_position, device=device, timeout=timeout,
                              warmup_timeout=warmup_timeout, isolate=isolate, memory_limit=memory_limit,
                              shape=call_shape(family=family, form=form, layout=layout, inplace=inplace, table=table,
                                               positions=positions))
    profile = profile or DEFAULT_PROFILE
    seed = seed if seed is not None else random.randrange(2**31)
    reports = check_implementations(impls, select_properties(invariants), profile=profile, seed=seed, replay=blob)
    return CheckResult(reports, seed, profile, allow_skip=allow_skip)


def fingerprint(fn, expect=None, *, array: str | None = None, dtype: str | None = None,
                max_position: int | None = None, device: str = "cpu", timeout: float | None = 10.0,
                warmup_timeout: float | None = 300.0, form: str = "apply", layout: str = "nd", inplace: bool = False,
                table=None, memory_limit=None):
    """Fingerprint ``fn`` (see :mod:`ropespec.properties.fingerprint`); ``expect`` gives head_dim, dtype and the probe
    range. ``fn`` runs in its own worker process, as in :func:`check`; ``form``, ``layout``, ``inplace`` and
    ``table`` as there."""
    [impl] = load_implementations([fn], expect=parse_expect(expect) or DEFAULT, array=array, dtype=dtype,
                               max_position=max_position, device=device, timeout=timeout,
                               warmup_timeout=warmup_timeout, memory_limit=memory_limit,
                               shape=call_shape(form=form, layout=layout, inplace=inplace, table=table))
    try:
        return _fingerprint(impl.as_rope(impl.expect), impl.expect)
    finally:
        impl.close()
