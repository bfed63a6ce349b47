"""Reading what the user hands over: an expectation (a preset name, inline JSON or a JSON file) and
the subjects."""

from __future__ import annotations

import json
from pathlib import Path

from implementations import arrays, make_subject, shipped_subjects
from implementations.contract import Subject, TargetError
from spec import hfconfig, presets
from spec.expectation import Expect, ExpectationError


class UsageError(Exception):
    """Bad usage: one line for the user, exit code 2."""


def parse_expect(text: str | dict | Expect | None) -> Expect | None:
    """An expectation from inline JSON, a dict, a path to a JSON file (ropespec's fields, or a Hugging
    Face config.json, see :mod:`spec.hfconfig`), a preset name, or an Expect."""
    if text is None or isinstance(text, Expect):
        return text
    if isinstance(text, dict):
        return Expect.from_dict(text)
    stripped = text.strip()
    if stripped.startswith("{"):
        return Expect.from_json(stripped)
    path = Path(stripped)
    if path.is_file():
        try:
            d = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise ExpectationError("expect", f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
        if isinstance(d, dict) and hfconfig.looks_like_hf_config(d):
            return hfconfig.from_hf_config(d)
        return Expect.from_dict(d)
    if stripped in presets.names():
        return presets.get(stripped)
    raise ExpectationError(
        "expect", f"{text!r} is not inline JSON, a JSON file or a preset (presets: {', '.join(presets.names())})"
    )


def build_subjects(
    targets: list | None,
    *,
    expect: Expect | None = None,
    array: str | None = None,
    dtype: str | None = None,
    max_position: int | None = None,
    device: str = "cpu",
    timeout: float | None = None,
    kind: str = "rope",
) -> list[Subject]:
    """Subjects for TARGETs (or the shipped implementations when none). UsageError on bad input."""
    if array is not None and array not in arrays.ARRAYS:
        raise UsageError(f"--array: unknown {array!r} (known: {', '.join(arrays.ARRAYS)})")
    if dtype is not None and dtype not in ("float64", "float32", "float16", "bfloat16"):
        raise UsageError(f"--dtype: unknown {dtype!r} (known: float64, float32, float16, bfloat16)")
    if timeout is not None and timeout < 0:
        raise UsageError(f"--timeout: must be >= 0 seconds (0: no limit), got {timeout:g}")
    if max_position is not None and max_position < 2:
        raise UsageError(f"--max-position: must be >= 2, got {max_position}")
    if not targets:
        return shipped_subjects(expect=expect, dtype=dtype, max_position=max_position, device=device, timeout=timeout)
    out = []
    for t in targets:
        try:
            out.append(
                make_subject(t, expect=expect, array=array or "numpy", dtype=dtype, max_position=max_position,
                             device=device, name=t if isinstance(t, str) else None, timeout=timeout, kind=kind)
            )
        except TargetError as e:
            raise UsageError(f"TARGET {e}") from None
    return out
