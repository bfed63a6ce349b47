"""Other libraries' readings of a config.json: each library builds its own RoPE from the same file, through its own
code, and ropespec measures what it computes against the reference reading (transformers',
:mod:`ropespec.spec.hfconfig`).

One module per library, each holding one :class:`Library` subclass; the registry finds them as the zoo finds its
members. A library that is not installed here (or cannot be imported) says so in one line (:meth:`Library.missing`):
its reading is never stood in for by a copy of its formulas.

A library's door is how ropespec calls what it built:

* ``rope``: :meth:`Library.rope` returns ``f(x, positions)`` on rows x (n, head_dim) float32, called only as a model
  calls its RoPE: a prefill (positions start, start + 1, ...) or a decoding step (every row at one position, one row
  per head).
* ``model``: :meth:`Library.logits` returns the logits of a tiny model made from the config, which the library loads
  through its own converter and loader; its RoPE is seen through the model only.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from pathlib import Path
from typing import Callable, ClassVar

#: name -> the library (an instance of its class), every module of this package imported
REGISTRY: dict[str, "Library"] = {}


class Unreadable(Exception):
    """The library cannot read this config (a model type it does not know): said in the table, not a verdict."""


class Library:
    """One library's reading of a config.json."""

    #: its name on ropespec's command line (``--library``)
    name: ClassVar[str]
    #: the distribution pip installs, whose version the table names
    distribution: ClassVar[str]
    #: the module imported to use it
    module: ClassVar[str]
    #: ropespec's extra that installs it (pip install -e '.[extra]'), None where none may (it pins its own torch)
    extra: ClassVar[str | None] = None
    #: "rope" or "model" (see the package's docstring)
    door: ClassVar[str] = "rope"
    #: door "model": its calls are prefills from position 0 only (its graph takes no positions)
    from_zero: ClassVar[bool] = False
    #: where it stands in lists: the reference reading first
    order: ClassVar[int] = 100

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            if cls.name in REGISTRY:
                raise ValueError(f"library {cls.name!r} registered twice")
            REGISTRY[cls.name] = cls()

    def __repr__(self) -> str:
        return f"<library {self.name}>"

    def version(self) -> str | None:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    def missing(self) -> str | None:
        """Why this library cannot be run here, in one line; None where it can."""
        if self.version() is None:
            how = (f"pip install -e '.[{self.extra}]'" if self.extra
                   else f"it is not an extra: install {self.distribution} as you serve with it")
            return f"{self.name} is not installed ({how})"
        try:
            importlib.import_module(self.module)
        except Exception as e:  # an import that fails here is the library's own answer, said in one line
            return f"{self.name} {self.version()} is installed but does not import here: {type(e).__name__}: {e}"
        return None

    def rope(self, folder: Path) -> Callable:
        """f(x, positions) as this library builds the RoPE from ``folder``/config.json (door "rope")."""
        raise NotImplementedError

    def logits(self, folder: Path, tokens, positions):
        """The logits (n, vocab) of the carrier model saved in ``folder``, ``tokens`` at ``positions`` (consecutive;
        from 0 where :attr:`from_zero`), one sequence (door "model")."""
        raise NotImplementedError


def get(name: str) -> Library:
    return REGISTRY[name]


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def find(name: str) -> Library | None:
    """The library a user names: by its name (mlx-lm), its distribution (llama-cpp-python) or ropespec's extra that
    installs it (mlx, the name pip install -e '.[mlx]' taught them); None where none is so named."""
    wanted = name.strip().lower()
    return next((lib for lib in REGISTRY.values()
                 if wanted in {lib.name.lower(), lib.distribution.lower(), (lib.extra or "").lower()}), None)


def listed() -> str:
    """Every library with the extra that installs it, as --library's help says them."""
    return ", ".join(f"{lib.name} ({lib.extra} extra)" if lib.extra else lib.name for lib in REGISTRY.values())


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    ordered = sorted(REGISTRY.values(), key=lambda lib: (lib.order, lib.name))
    REGISTRY.clear()
    REGISTRY.update((lib.name, lib) for lib in ordered)


_discover()
