"""The families ropespec checks: one class per family, one registry.

A family is what an implementation computes (RoPE, the sinusoidal encoding, ALiBi, ...). Its class says what the
spec knows of it: its word and what it means (the glossary's family list is this registry), the expectation's
fields it reads and its own parameter block, how a report's header says the expectation and its tolerance class, whether a model's preset
describes it, the expectations a factory of it is first bound with, and the command that fingerprints it. Its forms
(how it is called) are registered by its module in :mod:`ropespec.implementations.families`, its invariants in
:mod:`ropespec.spec.invariants` (the section of its name).

Adding a family is one module in this package holding one subclass of :class:`Family` (found as the scaling
methods and the zoo are: a module per family, imported in name order), its forms' module and its properties.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import ClassVar

from ropespec.spec import tolerance
from ropespec.spec.expectation import DEFAULT

#: name -> the family (an instance of its class), every module of this package imported, in :attr:`Family.order`
REGISTRY: dict[str, "Family"] = {}


class Family:
    """One family. Subclasses set the class attributes and override the hooks that differ from RoPE's (the base
    class is the behaviour of a family whose expectation is RoPE's)."""

    #: the word of ``--family``
    name: ClassVar[str]
    #: what it computes, in one line (the glossary's entry, the ``--family`` help)
    means: ClassVar[str]
    #: where it stands in lists (RoPE first)
    order: ClassVar[int] = 100
    #: the expectation's fields it reads, where it reads only some (a replay's --expect says just these); None: all
    fields: ClassVar[tuple[str, ...] | None] = None
    #: a model's preset or config.json (the command line's --expect) describes an implementation of it
    described_by_presets: ClassVar[bool] = False
    #: its parameter block (:mod:`ropespec.spec.params`): the expectation's fields that only it reads, or None
    params: ClassVar[type | None] = None
    #: a model's config.json given as the TARGET is an implementation of it: a tiny model of the config's own class
    config_targets: ClassVar[bool] = False
    #: what ``ropespec fingerprint --family NAME`` runs, as ``module:function`` (resolved where it runs, so that the
    #: spec imports no layer above it: the manner of Hypothesis' provider table); None: it has no fingerprint
    fingerprint: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            if cls.name in REGISTRY:
                raise ValueError(f"family {cls.name!r} registered twice")
            if cls.params is not None and cls.params.family != cls.name:
                raise ValueError(f"family {cls.name!r} names the parameter block of {cls.params.family!r}")
            REGISTRY[cls.name] = cls()
            resort()

    def describe(self, e) -> str:
        """The expectation as a report's header says it."""
        return e.describe()

    def class_name(self, e) -> str | None:
        """Its tolerance class as a report's header says it."""
        return tolerance.class_name(e)

    def rules(self, e) -> str | None:
        """What an implementation computing integers is judged by (its rules, exactly), or None: a tolerance class."""
        return None

    def drawn(self, dtype: str) -> str:
        """What a factory of it is checked against when no expectation is given, as a report's header says it."""
        return f"drawn expectations, {dtype}"

    def first_bound(self) -> list:
        """The expectations a factory of it is first bound with, each until one is taken: whether it declines the
        dtype outright, and whether it makes functions or decoders (None: the default expectation)."""
        return [DEFAULT]

    def load_problem(self, mode: str, expect) -> str | None:
        """Why an implementation of it cannot be checked in this mode with this expectation, or None."""
        return None

    def __repr__(self) -> str:
        return f"<family {self.name}>"


def get(name: str) -> Family:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"--family: one of {', '.join(REGISTRY)}, got {name!r}") from None


def of_config_targets() -> list[str]:
    """The families a config.json TARGET is an implementation of."""
    return [f.name for f in REGISTRY.values() if f.config_targets]


def names() -> list[str]:
    return list(REGISTRY)


def words() -> dict[str, str]:
    """The glossary's family list: each family's word and what it means."""
    return {f.name: f.means for f in REGISTRY.values()}


def fingerprinted() -> list[Family]:
    return [f for f in REGISTRY.values() if f.fingerprint]


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def resort() -> None:
    """The registry in :attr:`Family.order` (a family registered later, by a plug-in's module, takes its place)."""
    ordered = sorted(REGISTRY.values(), key=lambda f: (f.order, f.name))
    REGISTRY.clear()
    REGISTRY.update((f.name, f) for f in ordered)


_discover()
__all__ = ["REGISTRY", "Family", "fingerprinted", "get", "names", "words"]
