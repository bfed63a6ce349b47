"""xPos's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.spec.params import Params
from ropespec.spec.schema import RANGES, ExpectationError, _is_number, _short


@dataclass(frozen=True)
class XposParams(Params):
    """xPos's decay scale: zeta_i^((m - n) / xpos_scale_base)."""

    family = "xpos"
    xpos_scale_base: float = 512.0

    def validate(self, e) -> None:
        if not _is_number(self.xpos_scale_base) or self.xpos_scale_base <= 0:
            raise ExpectationError("xpos_scale_base",
                                   f"must be {RANGES['xpos_scale_base']}, got {_short(self.xpos_scale_base)}")
        object.__setattr__(self, "xpos_scale_base", float(self.xpos_scale_base))
