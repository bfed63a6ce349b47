"""Phi-3's LongRoPE decoded with its cache kept across the switch: keys turned with the short factors stay cached after
the table changes to the long ones (generate's re-prefill left out)."""

from ropespec.implementations.adapters import hf_model

TARGETS = ("model.length",)
DIAGNOSIS = "scaling"
SOURCE = "transformers #33129 (Phi-3: the stale cache across the LongRoPE switch, before its re-prefill)"
FAMILY = "model"
ARRAY = "torch"
REQUIRES = ("transformers",)
EXPECT = {"head_dim": 16, "max_position": 96, "dtype": "float64", "rope_scaling": {
    "rope_type": "longrope", "original_max_position_embeddings": 24, "factor": 4.0,
    "short_factor": [1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.35],
    "long_factor": [1.0, 2.5, 4.0, 5.5, 7.0, 8.5, 10.0, 11.5]}}


def make(expect):
    model = hf_model.phi3(expect)
    from transformers.generation.utils import GenerationMixin

    model.prepare_inputs_for_generation = GenerationMixin.prepare_inputs_for_generation.__get__(model)
    return model
