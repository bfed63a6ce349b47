"""Replays: the command line (or, for a callable no command can load, the ropespec.check call) that runs exactly one
failing case again, and the --invariant id that names the property it came from."""

from __future__ import annotations

import json
import shlex

from ropespec.implementations.implementation import Implementation
from ropespec.properties.framework import all_properties
from ropespec.properties.results import Result
from ropespec.request import CheckRequest


def property_id(result: Result) -> str:
    """What --invariant takes to run exactly the property a result came from: the invariant id, or
    ``ID:property`` when the invariant has more than one property."""
    siblings = [p for p in all_properties() if p.invariant == result.invariant]
    return result.invariant if len(siblings) <= 1 else f"{result.invariant}:{result.property}"


def replay_request(impl: Implementation, result: Result) -> CheckRequest:
    """The check request of exactly this failing case: the implementation as it was loaded (its TARGET, array, dtype,
    expectation or max_position, call shape), the property it came from, the run's profile and seed, and the
    failure's --replay blob where it has one."""
    fields = dict(targets=(impl.target,), array=impl.array, dtype=impl.dtype, invariants=(property_id(result),),
                  profile=result.profile, seed=result.seed, **impl.shape.keywords())
    if impl.expect is not None:
        fields["expect"] = (json.dumps(impl.expect_dict(), sort_keys=True, separators=(",", ":")),)
    else:
        fields["max_position"] = impl.max_position
    if result.replay:
        fields["replay"] = result.replay[1]
    return CheckRequest(**fields)


def replay_command(impl: Implementation, result: Result) -> str | None:
    """A command line that runs exactly this failing case again (None unless it failed, and None for a callable that
    runs in-process: no other process can load it, so no command can; :func:`replay_text` says how to rerun it)."""
    if result.status != "fail" or impl.isolation.startswith("in-process"):
        return None
    return replay_request(impl, result).command_line()


def replay_text(impl: Implementation, result: Result) -> str | None:
    """How to run exactly this failing case again: the command line, or, for a callable no command can load (a
    closure, a lambda, a function of __main__), the ropespec.check call that reruns it in the same process."""
    command = replay_command(impl, result)
    if command is not None or result.status != "fail":
        return command
    why = impl.isolation.removeprefix("in-process (").removesuffix(")")
    given = [impl.target.rpartition(".")[2] or "f"]
    if impl.expect is not None:
        given.append(repr(impl.expect_dict()))
    keywords = {"array": impl.array, "dtype": impl.dtype, "invariants": [property_id(result)],
                "seed": result.seed, "profile": result.profile}
    keywords.update(impl.shape.keywords())
    if impl.expect is None:
        keywords["max_position"] = impl.max_position
    if result.replay:
        keywords["replay"] = result.replay[1]
    call = ", ".join(given + [f"{k}={v!r}" for k, v in keywords.items() if v is not None])
    return f"no command can load it ({why}); in the same process: ropespec.check({call})"
