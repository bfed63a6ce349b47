"""The call shape: how the properties call an implementation, parsed, validated and turned back into flags here.

A call shape is the family (what it computes), the form (which function of the family: apply, table, kernel, qk,
vllm), the layout of an apply function's rows, whether it writes in place, and a kernel's table TARGET (a kernel or
qk function checked together with its library's table as one apply function). The mode (plain, factory, decoder)
is not part of it: it is what TARGET turns out to be when it is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ropespec.implementations.families import forms_called, forms_in_layout, forms_of, forms_writing_in_place
from ropespec.implementations.families.base import DEFAULT_FORM, Form
from ropespec.spec import families, layouts
from ropespec.spec.glossary import FORMS, LAYOUTS, POSITIONS
from ropespec.spec.layouts import Layout


def _either(names) -> str:
    """"a", "a or b", "a, b or c"."""
    names = list(names)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


class ShapeError(ValueError):
    """Options that do not fit together, in one line naming the option."""


@dataclass(frozen=True)
class CallShape:
    family: str = "rope"
    form: str = "apply"
    layout: str = "nd"
    inplace: bool = False
    #: the table builder of a kernel or qk function (a TARGET string, a callable, or a worker's reference to one)
    table: Any = None
    #: how the table reads in a command line (its TARGET string, or the name a worker loads it by)
    table_label: str | None = None
    #: what a packed (thd) call's positions are: one offset per sequence, or one position per token
    positions: str = "per-sequence"

    def __post_init__(self) -> None:
        if self.family not in families.REGISTRY:
            raise ShapeError(f"--family: one of {', '.join(families.REGISTRY)}, got {self.family!r}")
        if self.form not in FORMS:
            raise ShapeError(f"--form: one of {', '.join(FORMS)}, got {self.form!r}")
        if self.layout not in LAYOUTS:
            raise ShapeError(f"--layout: one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        own = forms_of(self.family)
        if self.form not in own:
            said = " and ".join(f"{f.of.means.split(':')[0]} (--family {f.family})" for f in forms_called(self.form))
            raise ShapeError(f"--form {self.form}: a form of {said}; drop it with --family {self.family}")
        if self.inplace and not any(f.writes_in_place for f in own.values()):
            said = " and ".join(f"{f.layouts_of} (--family {f.family})" for f in forms_writing_in_place() if f.layouts_of)
            raise ShapeError(f"--inplace: a layout of {said}; drop it with --family {self.family}")
        if not layouts.get(self.layout).plain:
            owners = forms_in_layout(self.layout)
            if self.family in {f.family for f in owners} and self.layout not in own[self.form].layouts:
                said = _either(f.name for f in owners if f.family == self.family)
                raise ShapeError(f"--layout {self.layout}: a layout of the {said} form; drop it with --form {self.form}")
            if (self.family, self.form) not in {f.key for f in owners}:
                said = " and ".join(f"{f.layouts_of} (--family {f.family})" for f in owners)
                raise ShapeError(f"--layout {self.layout}: a layout of {said}; drop it with --family {self.family}")
        if self.inplace and not own[self.form].writes_in_place:
            said = _either(f.says_itself for f in own.values() if f.writes_in_place)
            raise ShapeError(f"--inplace: {said} writes in place; drop it with --form {self.form}")
        if self.positions not in POSITIONS:
            raise ShapeError(f"--positions: one of {', '.join(POSITIONS)}, got {self.positions!r}")
        if self.positions != "per-sequence" and not layouts.get(self.layout).packed:
            raise ShapeError(f"--positions {self.positions}: the positions of a packed call, with --layout thd")
        if self.table is not None and not own[self.form].handed_a_table:
            kernels = _either(n for n, f in own.items() if f.handed_a_table)
            raise ShapeError(f"--table: the table of an apply kernel, with --form {kernels} (not --form {self.form})")
        if self.table is not None and self.table_label is None:
            label = self.table if isinstance(self.table, str) else getattr(self.table, "__qualname__", None)
            object.__setattr__(self, "table_label", label or repr(self.table))

    @property
    def checked_as(self) -> tuple[str, str]:
        """(family, form) of the function the properties call: a kernel with its table is one apply function."""
        return (self.family, DEFAULT_FORM) if self.table is not None else (self.family, self.form)

    @property
    def declared(self) -> Form:
        """The form it is called as (a kernel handed its library's table is still a kernel here)."""
        return forms_of(self.family)[self.form]

    @property
    def rows(self) -> str:
        """How one call lays out its rows: the layout, or the one its form's calls have (vLLM's flattened heads)."""
        return self.declared.rows or self.layout

    @property
    def own_layout(self) -> str:
        """The layout its form's calls take their rows in: ``--layout``, or for the plain default the form's first
        (the complex form's bshd, Meta's)."""
        return self.declared.layouts[0] if layouts.get(self.layout).plain else self.layout

    @property
    def laid_out(self) -> Layout:
        """The layout object of :attr:`rows`: what a property asks of how a call lays out its rows."""
        return layouts.get(self.rows)

    @property
    def plain(self) -> bool:
        """The family's own apply function on unbatched rows: f(x, positions), nothing else about the call."""
        return self.declared.applies and self.laid_out.plain

    def flags(self) -> list[str]:
        """The command-line options that make ``ropespec check`` call TARGET this way."""
        out = [] if self.family == _DEFAULT.family else ["--family", self.family]
        if self.form != _DEFAULT.form:
            out += ["--form", self.form]
        if self.table is not None:
            out += ["--table", self.table_label]
        if self.layout != _DEFAULT.layout:
            out += ["--layout", self.layout]
        if self.positions != "per-sequence":
            out += ["--positions", self.positions]
        return out + ["--inplace"] * self.inplace

    def keywords(self) -> dict:
        """The same as :func:`ropespec.check`'s keyword arguments (the defaults left out)."""
        out = {k: v for k, v in (("family", self.family), ("form", self.form), ("layout", self.layout),
                                 ("positions", self.positions))
               if v != CallShape.__dataclass_fields__[k].default}
        if self.table is not None:
            out["table"] = self.table_label
        if self.inplace:
            out["inplace"] = True
        return out

    def describe(self) -> str:
        """', bshd layout', ", vLLM's forward", ', --form kernel with --table T', ', in place' (empty for f(x, p))."""
        out = "" if layouts.get(self.layout).plain else f", {self.layout} layout"
        if self.positions == "per-token":
            out += ", one position per token"
        if self.declared.rows:
            out += f", {self.declared.says_itself}"
        if self.table is not None:
            out += f", --form {self.form} with --table {self.table_label}"
        return out + ", in place" * self.inplace


_DEFAULT = CallShape()
