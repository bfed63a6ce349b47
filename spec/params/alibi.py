"""ALiBi's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.spec.params import Params
from ropespec.spec.schema import RANGES, ExpectationError, _is_number, _short


@dataclass(frozen=True)
class AlibiParams(Params):
    """ALiBi's rule: the bias max of its slopes (MPT's alibi_bias_max), and whether the bias is symmetric in the
    distance (an encoder's) rather than causal."""

    family = "alibi"
    alibi_bias_max: float = 8.0
    bias_symmetric: bool = False

    def validate(self, e) -> None:
        if not _is_number(self.alibi_bias_max) or self.alibi_bias_max <= 0:
            raise ExpectationError("alibi_bias_max", f"must be {RANGES['alibi_bias_max']}, got {_short(self.alibi_bias_max)}")
        object.__setattr__(self, "alibi_bias_max", float(self.alibi_bias_max))
        if not isinstance(self.bias_symmetric, bool):
            raise ExpectationError("bias_symmetric", f"must be {RANGES['bias_symmetric']}, got {_short(self.bias_symmetric)}")
