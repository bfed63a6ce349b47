"""The messages that cross ropespec's process boundaries, as typed records both ends share.

* parent -> worker (``ropespec.implementations.boundary.worker``): :class:`Load`, :class:`Bind`, :class:`Warmup`, :class:`Operate`,
  :class:`CallModule`, :class:`Drop`, :class:`Stop`; the worker answers each with a reply (:class:`Ok`,
  :class:`Faulted`, :class:`Declined`, :class:`NotLoadable`, :class:`NotImplementedHere`), which :func:`unwrap`
  turns back into the value or the exception on the parent's side.
* parent -> fork server (``ropespec.implementations.boundary.zygote``): :class:`Preload`, :class:`Fork`, :class:`Wait`,
  :class:`Collect`; it answers :class:`Ok` or :class:`Refused`.
* main process <-> ``-j`` runner (``ropespec.runner``): :class:`Job` one way; :class:`Loaded`, :class:`Finished`,
  :class:`Progress`, :class:`Done`, :class:`JobFailed` back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ropespec.implementations.contract import DeclinedCase, Fault, TargetError, Unsupported, describe_exit, where


# -- parent -> worker -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Load:
    """Load TARGET (a reference: ``{"target": ...}`` or a function's ``{"module", "file", "qualname"}``; a lab
    module: ``{"module_path": ...}``) in the worker, as the parent's process sees the world."""

    target: dict
    shape: Any  # ropespec.implementations.shape.CallShape
    label: str
    array: str
    dtype: str
    device: str
    memory_limit: int | None
    path: list = field(default_factory=list)
    cwd: str | None = None
    env: dict | None = None


@dataclass(frozen=True)
class Bind:
    hid: int
    expect: dict


@dataclass(frozen=True)
class Warmup:
    hid: int


@dataclass(frozen=True)
class Operate:
    hid: int
    name: str
    args: tuple


@dataclass(frozen=True)
class CallModule:
    """Call the loaded module's function ``name`` with plain Python values (the lab grader)."""

    name: str
    args: tuple


@dataclass(frozen=True)
class Drop:
    hid: int


@dataclass(frozen=True)
class Stop:
    """End what the code under test left running below the worker, just before the worker itself is stopped."""


# -- worker -> parent -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ok:
    value: Any = None


@dataclass(frozen=True)
class Faulted:
    message: str
    word: str | None
    cause: str | None = None


@dataclass(frozen=True)
class Declined:
    message: str
    case: bool = False  # a door's decline of one input (DeclinedCase), not the implementation's of an expectation


@dataclass(frozen=True)
class NotLoadable:
    message: str


@dataclass(frozen=True)
class NotImplementedHere:
    message: str


def reply_to(run) -> Any:
    """Run a request's handler in the worker: its value as :class:`Ok`, or the exception as its reply."""
    try:
        return Ok(run())
    except Fault as e:
        return Faulted(e.message, e.diagnosis, e.cause)
    except Unsupported as e:
        return Declined(str(e), isinstance(e, DeclinedCase))
    except TargetError as e:
        return NotLoadable(str(e))
    except NotImplementedError as e:
        return NotImplementedHere(str(e))
    except BaseException as e:  # raised outside a guarded call: at import, or ropespec's own bug
        if isinstance(e, SystemExit):
            return Faulted(f"{describe_exit(e)}{where(e)}: it tried to end the process", "crash")
        return Faulted(f"{type(e).__name__}: {e}{where(e)}", "exception")


def unwrap(reply) -> Any:
    """On the parent's side: the value of an :class:`Ok`, or the exception a reply stands for, raised."""
    if isinstance(reply, Ok):
        return reply.value
    if isinstance(reply, Faulted):
        raise Fault(reply.message, reply.word, cause=reply.cause)
    if isinstance(reply, Declined):
        raise (DeclinedCase if reply.case else Unsupported)(reply.message)
    if isinstance(reply, NotLoadable):
        raise TargetError(reply.message)
    if isinstance(reply, NotImplementedHere):
        raise NotImplementedError(reply.message)
    raise RuntimeError(f"unexpected reply from the worker: {reply!r}")


# -- parent -> fork server ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Preload:
    names: tuple


@dataclass(frozen=True)
class Fork:
    """Followed by two file descriptors: the worker's channel and its output pipe."""


@dataclass(frozen=True)
class Wait:
    pid: int
    seconds: float


@dataclass(frozen=True)
class Collect:
    """Reap whatever else ended below the fork server (it is the subreaper of what a dead worker left)."""


@dataclass(frozen=True)
class Refused:
    message: str


# -- main process <-> -j runner ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    index: int
    request: Any  # what to load: a ropespec.implementations.loader.LoadRequest
    invariants: list | None
    profile: str
    seed: int
    replay: tuple | None


@dataclass(frozen=True)
class Loaded:
    index: int
    impl: Any


@dataclass(frozen=True)
class Finished:
    index: int
    result: Any  # a property's Result


@dataclass(frozen=True)
class Progress:
    index: int
    said: tuple  # (implementation, invariant, text, seconds)


@dataclass(frozen=True)
class Done:
    index: int


@dataclass(frozen=True)
class JobFailed:
    index: int
    message: str
    target_error: bool  # the TARGET does not load (else ropespec's own error)
