"""A position-id builder's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.spec.params import Params
from ropespec.spec.positions import FRAMING, TIME_RULES
from ropespec.spec.schema import FRAMING_MAX, RANGES, ExpectationError, _is_int, _is_number, _short


@dataclass(frozen=True)
class PositionRules(Params):
    """A position-id builder's rules (:mod:`ropespec.spec.positions`): how a video's temporal positions grow
    (``video_time``), the clock the seconds rule needs, and the text its model's prompts always have around a vision
    block (``vision_framing``: before, after), which the drawn sequences honour."""

    family = "position-ids"
    label = "video time rule"
    video_time: str | None = None
    tokens_per_second: float | None = None
    vision_framing: tuple[int, int] = FRAMING

    def validate(self, e) -> None:
        """A time rule of :data:`ropespec.spec.positions.TIME_RULES` for a three-axis shared ladder (t, h, w), and a
        framing of two small counts of tokens (stored as a tuple)."""
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
        vf = self.vision_framing
        if not isinstance(vf, (list, tuple)) or len(vf) != 2 or \
                not all(_is_int(v) and 0 <= v <= FRAMING_MAX for v in vf):
            raise ExpectationError("vision_framing", f"must be {RANGES['vision_framing']}, got {_short(vf)}")
        object.__setattr__(self, "vision_framing", (int(vf[0]), int(vf[1])))
        if self.vision_framing != FRAMING and (e.mrope_section is None or e.n_axes != 3):
            raise ExpectationError("vision_framing", "needs a 3-axis mrope_section (t, h, w): the blocks it frames "
                                                     "take M-RoPE positions")

    def says(self) -> str | None:
        parts = []
        if self.video_time is not None:
            parts.append(f"video time {self.video_time}"
                         + (f" at {self.tokens_per_second:g} tokens per second" if self.tokens_per_second else ""))
        if self.vision_framing != FRAMING:
            before, after = self.vision_framing
            parts.append(f"vision blocks framed by {before} text token{'s' * (before != 1)} before and {after} after")
        return ", ".join(parts) or None

    @classmethod
    def follow(cls, d: dict, changes: dict) -> None:
        """An expectation no longer an M-RoPE of t, h, w has no position rules either."""
        sections = d.get("mrope_section")
        if sections is not None and len(sections) == 3:
            return
        if "video_time" not in changes and d.get("video_time") is not None:
            d.pop("video_time")
            d.pop("tokens_per_second", None)
        if "vision_framing" not in changes:
            d.pop("vision_framing", None)
