"""The zoo: known-buggy implementations, each modelled on a real bug.

Each member is a module in its family's folder here (``rope/``, ``alibi/``, ``t5_bias/``, ...) with a factory ``make(expect)``, ``TARGETS`` (the invariant ids it
must fail), its call shape where it is not f(x, positions) (``FAMILY``, ``FORM``, ``LAYOUT``, ``INPLACE``, ``POSITIONS``), ``DIAGNOSIS`` (the word a correct diagnosis names) and ``SOURCE`` (where the bug was
seen). Its docstring's first line says what it does wrong. A member may carry ``EXPECT``, a dict of
expectation fields it is checked under (the precision class it claims, say); otherwise the suite draws
expectations. ``NEAR = True`` marks a near-threshold member: its worst error is 2 to 10 times the bound of
the property it targets, so that a bound 10 times too loose would let it pass. ``ARRAY`` is the array kind it takes; ``REQUIRES`` the optional libraries it needs (triton); ``TIMEOUT`` and ``WARMUP_TIMEOUT`` (seconds) are
short limits for members that hang. Members that crash their process are safe to check: every
implementation runs in its own worker process.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

from ropespec.implementations.loader import LoadRequest
from ropespec.implementations.shape import CallShape
from ropespec.spec.expectation import Expect


@dataclass(frozen=True)
class Member:
    name: str
    target: str
    description: str
    targets: tuple[str, ...]
    diagnosis: str
    source: str
    expect: dict | None = None
    array: str = "numpy"
    #: how it is called (FAMILY, FORM, LAYOUT, INPLACE: ropespec.spec.glossary's words)
    shape: CallShape = CallShape()
    timeout: float | None = None  # seconds per call (None: the default), for members that hang
    warmup_timeout: float | None = None
    near: bool = False  # a near-threshold member: its worst error is 2 to 10 times the bound it breaks
    requires: tuple[str, ...] = ()  # optional libraries it needs (REQUIRES): without them it is not checked


    def request(self, dtype: str | None = None) -> LoadRequest:
        """What this member is checked as: under ``EXPECT`` when it has one (in its dtype unless ``dtype`` is given),
        else on drawn expectations (float64 unless ``dtype`` is given)."""
        e = Expect.from_dict(self.expect) if self.expect is not None else None
        return LoadRequest(self.target, name=self.name, array=self.array, expect=e,
                           dtype=dtype or (e.dtype if e is not None else "float64"), timeout=self.timeout,
                           warmup_timeout=self.warmup_timeout, shape=self.shape)

    def impl(self, dtype: str | None = None):
        """The member loaded (:meth:`request`)."""
        return self.request(dtype).load()


#: the folder of the lab module's variants, which are no members
LAB = "lab"


def _modules() -> list[tuple[str, str]]:
    """(member name, module) of every member: each family's members in a folder of its own (``rope/``,
    ``alibi/``, ...; the family's name with ``_`` for ``-``), a member's name being its module's."""
    out = []
    for folder in pkgutil.iter_modules(__path__):
        if not folder.ispkg or folder.name == LAB:
            continue
        package = importlib.import_module(f"{__name__}.{folder.name}")
        out += [(info.name, f"{package.__name__}.{info.name}") for info in pkgutil.iter_modules(package.__path__)
                if not info.name.startswith("_")]
    return sorted(out)


def members() -> list[Member]:
    """Every zoo member, by name."""
    out = []
    for name, module in _modules():
        mod = importlib.import_module(module)
        out.append(
            Member(
                name=name,
                target=f"{module}:make",
                description=(mod.__doc__ or "").strip().splitlines()[0],
                targets=tuple(mod.TARGETS),
                diagnosis=mod.DIAGNOSIS,
                source=mod.SOURCE,
                expect=getattr(mod, "EXPECT", None),
                array=getattr(mod, "ARRAY", "numpy"),
                shape=CallShape(getattr(mod, "FAMILY", "rope"), getattr(mod, "FORM", "apply"),
                                getattr(mod, "LAYOUT", "nd"), bool(getattr(mod, "INPLACE", False)),
                                positions=getattr(mod, "POSITIONS", "per-sequence")),
                timeout=getattr(mod, "TIMEOUT", None),
                warmup_timeout=getattr(mod, "WARMUP_TIMEOUT", None),
                near=bool(getattr(mod, "NEAR", False)),
                requires=tuple(getattr(mod, "REQUIRES", ())),
            )
        )
    return out
