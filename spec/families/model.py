from ropespec.spec.families import Family
from ropespec.spec.params.attention import AttentionParams  # noqa: F401 (a model's heads are the attention block's)


class Model(Family):
    name = "model"
    means = ("a whole model around its RoPE: forward(ids, positions, mask, cache) -> (logits, cache), the positions it "
             "hands its rotary recorded (a tiny transformers model, or a decoder of its own)")
    order = 60
    described_by_presets = True
    config_targets = True

    def describe(self, e) -> str:
        return f"a model whose RoPE is {e.describe()}"

    def class_name(self, e) -> str | None:
        return f"positions exact (integers); logits to the {e.dtype} forward's rounding (model_logits_bound)"

    def drawn(self, dtype: str) -> str:
        return f"the default RoPE, {dtype}"
