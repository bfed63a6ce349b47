from ropespec.spec import presets
from ropespec.spec.families import Family
from ropespec.spec.params.position_ids import PositionRules


class PositionIds(Family):
    """A builder of multimodal position ids, judged exactly against one model's position rules (``video_time``)."""

    name = "position-ids"
    params = PositionRules
    means = ("a multimodal position-id builder: position_ids(segments) -> (n, 3) t, h, w positions of text, image and "
             "video tokens (Qwen2-VL's get_rope_index)")
    order = 40

    def rules(self, e) -> str:
        return f"the position rules of {e.params(self.name).says()}, judged exactly"

    def drawn(self, dtype: str) -> str:
        return f"the position rules of {', '.join(presets.position_rules())} that it takes"

    def first_bound(self) -> list:
        # a factory of one model's position rules declines the others'
        return [presets.get(n) for n in presets.position_rules()]

    def load_problem(self, mode: str, expect) -> str | None:
        """A builder is checked against a model's rules (``video_time``): a plain one needs them named."""
        known = ", ".join(presets.position_rules())
        if expect is not None and expect.params('position-ids').video_time is None:
            return (f"--expect has no video_time, and a position-id builder is checked against a model's rules: a "
                    f"preset ({known}) or an expectation with video_time (grid, seconds or frames)")
        if expect is None and mode == "plain":
            return (f"a plain position-id builder computes one model's rules: name them with --expect ({known}, or an "
                    f"expectation with video_time)")
        return None
