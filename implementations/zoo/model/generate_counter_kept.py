"""A transformers Llama whose generation loop keeps, on the model, the count of the tokens it generated in earlier
calls and adds it to each new token's position: every forward is right, and a generate after another decodes at
positions as far off as the earlier calls generated (generation state kept between calls)."""

from ropespec.implementations.adapters import hf_model

TARGETS = ("model.stateless",)
DIAGNOSIS = "stale-state"
SOURCE = ("transformers #39749 (Qwen2.5-VL's rope_deltas, set by one generation pass on the model, used by the "
          "next); transformers #43952 (a new generate adding the deltas of the call before)")
FAMILY = "model"
ARRAY = "torch"
REQUIRES = ("transformers",)
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


def make(expect):
    model = hf_model.llama(expect)
    base, generate = type(model)._update_model_kwargs_for_generation, model.generate
    model.generated, model.earlier = 0, 0

    def update(outputs, model_kwargs, *args, **kwargs):
        updated = base(model, outputs, model_kwargs, *args, **kwargs)
        if updated.get("position_ids") is not None:  # the new token's position, and the earlier calls' count
            updated["position_ids"][..., -1:] += model.earlier
        model.generated += 1
        return updated

    def generate_again(*args, **kwargs):
        model.earlier = model.generated  # what the calls before this one generated
        return generate(*args, **kwargs)

    model._update_model_kwargs_for_generation = update
    model.generate = generate_again
    return model
