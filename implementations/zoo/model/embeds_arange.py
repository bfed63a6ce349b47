"""Infers its positions as 0, 1, ... (plus the cache's length) when it is handed its tokens' embeddings: the
inputs_embeds path skips the mask's positions, so a left-padded row's tokens are turned with its pads counted."""

from ropespec.implementations.adapters import hf_model

TARGETS = ("model.canonical",)
DIAGNOSIS = "padding-shift"
SOURCE = "transformers #35466 (Qwen2-VL: inputs_embeds skipped the position-id builder)"
FAMILY = "model"
ARRAY = "torch"
REQUIRES = ("transformers",)
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


def make(expect):
    model = hf_model.llama(expect)
    inner = model.model
    forward = inner.forward

    def embeds_arange(*args, inputs_embeds=None, position_ids=None, **kwargs):
        if inputs_embeds is not None:
            position_ids = None  # the model's own fallback: arange from the cache's length
        return forward(*args, inputs_embeds=inputs_embeds, position_ids=position_ids, **kwargs)

    inner.forward = embeds_arange
    return model
