"""A family's parameter block: the fields of an expectation that only one family reads.

An :class:`ropespec.spec.expectation.Expect` is the core fields every RoPE-like encoding shares (head_dim, theta, the
pair geometry, dtype, the domain) plus one block of parameters per family that has its own (ALiBi's bias max, xPos's
scale base, a position-id builder's clock). Each block is a frozen dataclass subclassing :class:`Params`, one module
of this package per family (found as the scaling methods are: every module imported, in name order), registered by
its family's name; the family's class (:mod:`ropespec.spec.families`) names it as its ``params``. Its field names are the
expectation's keys as they read in a file, a preset and ``--expect`` (flat: ``{"alibi_bias_max": 4}``), stated once
with their ranges in :data:`ropespec.spec.schema.RANGES`.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any, ClassVar

#: family name -> its parameter block's class, in registration order
REGISTRY: dict[str, type["Params"]] = {}


@dataclasses.dataclass(frozen=True)
class Params:
    """One family's parameters. A subclass is a frozen dataclass whose fields have defaults (the block of an
    expectation that does not mention them), and sets ``family``."""

    family: ClassVar[str]
    #: what the block states, in a few words: how a run of another family says it leaves it to this one
    label: ClassVar[str] = "parameters"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "family" in cls.__dict__:
            if cls.family in REGISTRY and REGISTRY[cls.family].__qualname__ != cls.__qualname__:
                raise ValueError(f"parameters of family {cls.family!r} registered twice")
            REGISTRY[cls.family] = cls

    def validate(self, e) -> None:
        """Checks the block against the whole expectation ``e`` (its core fields validated already), normalising
        values in place (``object.__setattr__``); raises ExpectationError naming the field."""

    def says(self) -> str | None:
        """How the block reads in :meth:`Expect.describe` (None: it adds nothing to a RoPE's line)."""
        return None

    @classmethod
    def follow(cls, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """:meth:`Expect.replace`'s rule: drops from the flat dict ``d`` the keys of this block that ``changes`` (to
        core fields) leave meaningless."""

    def changed(self) -> dict[str, Any]:
        """The fields that differ from the block's defaults, as a file writes them."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}


def blocks() -> dict[str, type[Params]]:
    """Every family's parameter block."""
    return REGISTRY


def owners() -> dict[str, str]:
    """Each block's key -> the family it belongs to."""
    return {f.name: fam for fam, cls in blocks().items() for f in dataclasses.fields(cls)}


def default(family: str) -> Params:
    """The block of an expectation that does not mention the family's keys."""
    cls = blocks().get(family)
    if cls is None:
        raise KeyError(f"family {family!r} has no parameter block (blocks: {', '.join(blocks())})")
    return cls()


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_discover()
