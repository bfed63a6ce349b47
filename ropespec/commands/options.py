"""What several commands do with what they were asked: write a report, call the implementation as a function, say
that it failed to run. (Their options are fields of their requests: :mod:`ropespec.request`.)"""

from __future__ import annotations

import json
import sys

from ropespec.implementations.contract import Failure
from ropespec.inputs import UsageError


def json_text(data: dict) -> str:
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def written(outs, option: str, text: str) -> int:
    """Write one report: 0, or 2 with one line when it could not be written (a full disk, a closed pipe)."""
    problem = outs.write(option, text)
    if problem:
        print(f"ropespec: error: {problem}", file=sys.stderr)
        return 2
    return 0


def function_of(impl, target: str, *, bound: bool = False):
    """The implementation as f(x, positions) for its expectation (precision, fingerprint), or (``bound``) as its
    form's Bound (a bias family's fingerprint); UsageError when it cannot run here or declines the expectation; a
    Failure of the target itself goes to the caller."""
    if impl.skip_reason:
        raise UsageError(f"TARGET {target}: {impl.skip_reason}")
    try:
        return impl.bind(impl.expect) if bound else impl.as_rope(impl.expect)
    except Failure:
        raise
    except Exception as ex:  # Unsupported: the factory declines this expectation
        raise UsageError(f"TARGET {target}: cannot build for {impl.expect.describe()}: {ex}") from None


def failed_to_run(console, target: str, ex: Failure) -> int:
    """A target that failed as a program while being measured: one line, exit 1."""
    console.print(f"{target}: {ex.message}" + (f" [{ex.diagnosis}]" if ex.diagnosis else ""), highlight=False,
                  markup=False)
    return 1
