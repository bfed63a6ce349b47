"""The sinusoidal family: ``pe(positions, d)`` (or a factory ``make(expect)``), the additive encoding PE(p) with
``rope_theta`` as its base and the convention as its layout (interleaved sin/cos as in the paper, or half:
concatenated [sin | cos])."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.families.base import Bound, Form, Op, i64, register


def op_pe(host, fn, e, positions):
    out = host.call("pe(positions, d)", fn, host.native_positions(positions, e), e.head_dim)
    return host.rows(out, e, (len(positions), e.head_dim))


class SinusoidalBound(Bound):
    def pe(self, positions: np.ndarray) -> np.ndarray:
        """pe(positions, d) as float64 (n, d)."""
        return self._op("pe", i64(positions))


SINUSOIDAL = Form("sinusoidal", "apply", ((2,), "(positions, d)"), ("sinusoidal.*", "additive.*"),
                  {"pe": Op(op_pe, "pe(positions, d)", lambda shape, positions: [positions])},
                  lambda host, fn, e: op_pe(host, fn, e, np.array([0, 1], dtype=np.int64)), SinusoidalBound)
register(SINUSOIDAL)
