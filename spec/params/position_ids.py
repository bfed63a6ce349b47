"""A position-id builder's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.spec.params import Params
from ropespec.spec.positions import TIME_RULES
from ropespec.spec.schema import RANGES, ExpectationError, _is_number, _short


@dataclass(frozen=True)
class PositionRules(Params):
    """A position-id builder's rules (:mod:`ropespec.spec.positions`): how a video's temporal positions grow
    (``video_time``), and the clock the seconds rule needs."""

    family = "position-ids"
    label = "video time rule"
    video_time: str | None = None
    tokens_per_second: float | None = None

    def validate(self, e) -> None:
        """A time rule of :data:`ropespec.spec.positions.TIME_RULES` for a three-axis shared ladder (t, h, w)."""
        vt, tps = self.video_time, self.tokens_per_second
        if vt is not None:
            if vt not in TIME_RULES:
                raise ExpectationError("video_time", f"must be {RANGES['video_time']}, got {_short(vt)}")
            if e.mrope_section is None or e.n_axes != 3:
                raise ExpectationError("video_time", "needs a 3-axis mrope_section (t, h, w): the positions it rules "
                                                     "feed an M-RoPE")
        if tps is not None:
            if not _is_number(tps) or tps <= 0:
                raise ExpectationError("tokens_per_second", f"must be {RANGES['tokens_per_second']}, got {_short(tps)}")
            if vt != "seconds":
                raise ExpectationError("tokens_per_second", "only with video_time seconds (the clock it scales)")
            object.__setattr__(self, "tokens_per_second", float(tps))
        elif vt == "seconds":
            raise ExpectationError("tokens_per_second", "required with video_time seconds")

    def says(self) -> str | None:
        if self.video_time is None:
            return None
        return (f"video time {self.video_time}"
                + (f" at {self.tokens_per_second:g} tokens per second" if self.tokens_per_second else ""))

    @classmethod
    def follow(cls, d: dict, changes: dict) -> None:
        """An expectation no longer an M-RoPE of t, h, w has no position rules either."""
        if "video_time" not in changes and d.get("video_time") is not None:
            sections = d.get("mrope_section")
            if sections is None or len(sections) != 3:
                d.pop("video_time")
                d.pop("tokens_per_second", None)
