"""transformers' causal LMs as whole-model targets (the model family): a tiny model of a model type, built on the CPU
from its own config class with random weights, in float64, its RoPE the expectation's (base, scaling, partial rotary,
M-RoPE sections: transformers' rope_parameters, as :func:`ropespec.implementations.adapters.hf.rope_parameters` writes
them) and only its sizes shrunk:

    ropespec check ropespec.implementations.adapters.hf_model:llama --family model --expect llama3.1-8b
    ropespec check ropespec.implementations.adapters.hf_model:qwen2_vl --family model --expect qwen2-vl-7b
    ropespec check ropespec.implementations.adapters.hf_model:phi3 --family model --expect phi-3-mini-128k/config.json

Any causal LM model type of the installed transformers is a factory here by its name
(``hf_model:mistral``, ``hf_model:qwen2``): its config class with the tiny sizes and the expectation's RoPE. No weights
are downloaded. q and k are scaled by SHARPEN so that attention is far from uniform (at transformers' initialisation
it is nearly uniform, which would hide a wrong position).

The model is driven as ``generate`` drives it (:mod:`ropespec.implementations.families.model`): its positions, where
ropespec gives none, are the model's own generation code's (``_prepare_position_ids_for_generation`` from the
attention mask, one more per new token), and each forward's inputs are its ``prepare_inputs_for_generation``'s.
"""

from __future__ import annotations

import copy

from ropespec.implementations.adapters.hf import rope_parameters

ARRAY = "torch"
#: the tiny sizes: layers, heads and key/value heads, the vocabulary, the MLP's width per hidden unit
TINY = dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=128)
MLP_RATIO = 2
#: q and k projections are scaled by this: the softmax's logits by its square, so that attention is peaked
SHARPEN = 8.0
#: the last model built, as drawn, by (model type, expectation): a property asks for a fresh model per example
_BUILT: dict = {}
#: a model type's config and model classes where they are not <Type>Config and <Type>ForCausalLM
CLASSES = {"qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration"),
           "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration")}


def _classes(model_type: str):
    import transformers

    if model_type in CLASSES:
        return tuple(getattr(transformers, n) for n in CLASSES[model_type])
    config = transformers.AutoConfig.for_model(model_type).__class__
    model = transformers.AutoModelForCausalLM._model_mapping[config]
    return config, model


def _config(model_type: str, expect):
    """The tiny config: the model type's class, the tiny sizes, the expectation's RoPE."""
    config_cls, _ = _classes(model_type)
    params, max_pos = rope_parameters(expect)
    if expect.mrope_section is not None:
        params["mrope_section"] = list(expect.mrope_section)
    heads = TINY["num_attention_heads"]
    hidden = heads * expect.head_dim
    text = dict(TINY, hidden_size=hidden, head_dim=expect.head_dim, intermediate_size=MLP_RATIO * hidden,
                max_position_embeddings=max_pos, rope_parameters=params, pad_token_id=0, bos_token_id=1,
                eos_token_id=2)
    if "original_max_position_embeddings" in params:  # Phi-3 keeps it at the top level too
        text["original_max_position_embeddings"] = params["original_max_position_embeddings"]
    if model_type in CLASSES:  # a vision-language model: its text config, and a vision tower it does not use
        config = config_cls(text_config=text, vision_config=dict(depth=1, embed_dim=32, hidden_size=hidden,
                                                                 num_heads=2, patch_size=2, spatial_merge_size=1,
                                                                 temporal_patch_size=1, in_channels=3),
                            image_token_id=120, video_token_id=121, vision_start_token_id=122,
                            vision_end_token_id=123)
    else:
        config = config_cls(**text)
    config._attn_implementation = "sdpa"  # eager softmaxes in float32, where float64's mask fill is -inf: NaN rows
    return config


def _sharpen(model, factor: float = SHARPEN) -> None:
    import torch

    with torch.no_grad():
        for name, module in model.named_modules():
            if name.endswith(("q_proj", "k_proj")):
                module.weight.mul_(factor)
            elif name.endswith("qkv_proj"):  # q, k and v fused (Phi-3): the q and k rows only
                config = model.config.get_text_config()
                rows = (config.num_attention_heads + config.num_key_value_heads) * config.head_dim
                module.weight[:rows].mul_(factor)


def factory(model_type: str):
    """make(expect): a tiny ``model_type`` causal LM of the expectation's RoPE, float64, seed 0."""

    def make(expect):
        try:
            import torch

            _classes(model_type)
        except ImportError:
            raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
        except (KeyError, ValueError):
            import transformers

            raise NotImplementedError(
                f"transformers {transformers.__version__} has no causal LM of model type {model_type!r} (a model whose "
                "code is its hub repository's, remote code, is not built here: hand ropespec the model from a factory "
                "of your own)") from None
        if expect.dtype != "float64":
            raise NotImplementedError("a tiny model is checked in float64, --dtype float64 (its logits to the "
                                      "float64 forward's rounding)")
        key = (model_type, expect)
        if key not in _BUILT:  # drawn once per expectation (seed 0); each call is a copy never called before
            config = _config(model_type, expect)
            torch.manual_seed(0)
            model = _classes(model_type)[1](config).double().eval()
            _sharpen(model)
            _BUILT.clear()
            _BUILT[key] = model
        return copy.deepcopy(_BUILT[key])

    make.__name__ = make.__qualname__ = model_type
    make.__doc__ = f"transformers' {model_type}, tiny, of the expectation's RoPE."
    return make


llama = factory("llama")
phi3 = factory("phi3")
qwen2_vl = factory("qwen2_vl")


def __getattr__(name: str):
    """Every other model type of the installed transformers, by its name: ``hf_model:mistral``."""
    if name.startswith("_"):
        raise AttributeError(name)
    return factory(name)
