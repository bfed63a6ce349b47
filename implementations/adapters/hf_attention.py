"""transformers' DeepSeek-V2 and DeepSeek-V3 attention (and Ministral 3's, with its query temperature by position) (multi-head latent attention) as their models compute the
scores of the rotary dims, for the attention family (``attend(q, k, v, positions, causal)``):

    ropespec check ropespec.implementations.adapters.hf_attention:deepseek_v3 --family attention --array torch --expect deepseek-v3
    ropespec check ropespec.implementations.adapters.hf_attention:ministral3 --family attention --array torch --expect ministral-3
    ropespec check ropespec.implementations.adapters.hf_attention:deepseek_v2 --family attention --array torch \\
        --expect '{"head_dim": 64, "convention": "interleaved", ...}'

Each part is the model's own: its config class, its rotary embedding (cos and sin, or V2's complex freqs_cis,
carrying mscale(s, mscale)/mscale(s, mscale_all_dim)), its apply function, its attention module's softmax scale
(``yarn_apply_mscale``: 1/sqrt(qk_head_dim) times mscale(s, mscale_all_dim)^2) and its ``eager_attention_forward``
with transformers' additive causal mask. q holds n_heads heads of qk_rope_head_dim (no nope dims: the scores of the
rotary dims alone), k and v n_kv_heads; V3's ``rope_interleave`` reads interleaved pairs and writes the half layout,
V2 pairs interleaved (its complex form). Needs transformers (``pip install -e '.[hf]'``); without it the factories
decline.
"""

from __future__ import annotations

import importlib

from ropespec.implementations.adapters.hf import rope_parameters
from ropespec.spec import methods

ARRAY = "torch"

#: model type -> (config class, attention class, rotary class, the conventions its code pairs)
MODELS = {"deepseek_v3": ("DeepseekV3Config", "DeepseekV3Attention", "DeepseekV3RotaryEmbedding",
                          ("rope_interleave", "half")),
          "deepseek_v2": ("DeepseekV2Config", "DeepseekV2Attention", "DeepseekV2RotaryEmbedding", ("interleaved",))}


#: the scaling methods these attention modules are checked with (transformers' YaRN of DeepSeek above all)
_CHECKED_METHODS = tuple(methods.get(n) for n in ("default", "yarn", "linear", "dynamic"))


def _factory(model_type: str):
    config_name, attention_name, rotary_name, conventions = MODELS[model_type]

    def make(expect):
        try:
            import torch  # noqa: F401  (without torch the factory declines)
            import transformers

            modeling = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
        except ImportError:
            raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
        if expect.convention not in conventions:
            raise NotImplementedError(f"transformers' {model_type} code pairs {' or '.join(conventions)}, "
                                      f"not {expect.convention}")
        if expect.rotary_dim != expect.head_dim:
            raise NotImplementedError(f"transformers' {model_type} rotates every qk_rope_head_dim dim")
        if expect.method not in _CHECKED_METHODS:
            raise NotImplementedError(f"ropespec checks {model_type}'s attention with default or yarn rope types")
        params, max_pos = rope_parameters(expect)
        d, h, h_kv = expect.head_dim, expect.n_heads, expect.n_kv_heads
        config = getattr(transformers, config_name)(
            hidden_size=h * d, num_attention_heads=h, num_key_value_heads=h_kv, qk_rope_head_dim=d,
            qk_nope_head_dim=0, v_head_dim=d, kv_lora_rank=16, q_lora_rank=None, max_position_embeddings=max_pos,
            rope_parameters=params, **({"rope_interleave": expect.convention == "rope_interleave"}
                                       if model_type == "deepseek_v3" else {}))
        config._attn_implementation = "eager"
        module = getattr(modeling, attention_name)(config, layer_idx=0).eval()
        module.num_key_value_groups = h // h_kv  # the grouped-query heads eager_attention_forward repeats
        rotary = getattr(modeling, rotary_name)(config)

        def rotate(qh, kh, positions):
            rotary.to(qh.device)
            if model_type == "deepseek_v2":
                return modeling.apply_rotary_emb(qh, kh, rotary(qh, positions[None]))
            cos, sin = rotary(qh, positions[None])
            apply = (modeling.apply_rotary_pos_emb_interleave if expect.convention == "rope_interleave"
                     else modeling.apply_rotary_pos_emb)
            return apply(qh, kh, cos, sin)

        return _eager_attend(modeling, module, expect, rotate)

    make.__name__ = make.__qualname__ = model_type
    make.__doc__ = f"transformers' {model_type} attention: its rotary embedding, apply function and softmax scale."
    return make


deepseek_v3 = _factory("deepseek_v3")
deepseek_v2 = _factory("deepseek_v2")


def ministral3(expect):
    """transformers' Ministral 3 attention as its module computes it: Ministral3RotaryEmbedding and
    apply_rotary_pos_emb, then the queries times get_llama_4_attn_scale(position_ids, llama_4_scaling_beta,
    original_max_position_embeddings) (its query temperature, floor(p / L): offset 0), then eager_attention_forward
    with its softmax scale. The temperature's step and YaRN's original length are one config key there, so an
    expectation giving them apart is declined, as are other conventions, partial rotary and other rope types."""
    try:
        import torch  # noqa: F401  (without torch the factory declines)
        import transformers
        from transformers.models.ministral3 import modeling_ministral3 as modeling
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
    block = expect.params("attention")
    if expect.convention != "half" or expect.rotary_dim != expect.head_dim:
        raise NotImplementedError("transformers' ministral3 code pairs half, over the whole head")
    if expect.method not in _CHECKED_METHODS:
        raise NotImplementedError("ropespec checks ministral3's attention with default, yarn, linear or dynamic")
    if block.tempered and block.query_temperature_offset != 0:
        raise NotImplementedError("transformers' ministral3 steps its query temperature at floor(p / L): offset 0")
    params, max_pos = rope_parameters(expect)
    length = block.query_temperature_length
    if params.get("original_max_position_embeddings", length) != length:
        raise NotImplementedError("transformers' ministral3 reads the query temperature's step from the rope "
                                  "parameters' original_max_position_embeddings: give the two alike")
    params.update(original_max_position_embeddings=length, llama_4_scaling_beta=block.query_temperature_beta)
    d, h, h_kv = expect.head_dim, expect.n_heads, expect.n_kv_heads
    config = transformers.Ministral3Config(hidden_size=h * d, num_attention_heads=h, num_key_value_heads=h_kv,
                                           head_dim=d, max_position_embeddings=max_pos, rope_parameters=params)
    config._attn_implementation = "eager"
    module = modeling.Ministral3Attention(config, layer_idx=0).eval()
    rotary = modeling.Ministral3RotaryEmbedding(config)

    def rotate(qh, kh, positions):
        rotary.to(qh.device)
        cos, sin = rotary(qh, positions[None])
        qh, kh = modeling.apply_rotary_pos_emb(qh, kh, cos, sin)
        scale = modeling.get_llama_4_attn_scale(positions[None], config.rope_parameters["llama_4_scaling_beta"], length)
        return qh * scale.to(qh.dtype), kh

    return _eager_attend(modeling, module, expect, rotate)


def _eager_attend(modeling, module, expect, rotate):
    """attend(q, k, v, positions, causal) as a transformers attention module computes it: q (n, n_heads head_dim), k and
    v (n, n_kv_heads head_dim) as (1, heads, n, head_dim), ``rotate(qh, kh, positions) -> (qh, kh)`` the model's own
    rotary steps, then its eager_attention_forward with transformers' additive causal mask and the module's softmax
    scale (``attend.module``)."""
    import torch

    d, h, h_kv = expect.head_dim, expect.n_heads, expect.n_kv_heads

    def attend(q, k, v, positions, causal):
        n = positions.shape[0]
        heads = lambda a, m: a.reshape(n, m, d).transpose(0, 1)[None]  # noqa: E731  (1, heads, n, d)
        qh, kh, vh = heads(q, h), heads(k, h_kv), heads(v, h_kv)
        with torch.no_grad():
            qh, kh = rotate(qh, kh, positions)
            mask = None
            if causal:
                mask = torch.full((n, n), torch.finfo(q.dtype).min, dtype=q.dtype, device=q.device)
                mask = torch.triu(mask, diagonal=1)[None, None]
            out, _ = modeling.eager_attention_forward(module, qh, kh, vh, mask, scaling=module.scaling)
        return out.reshape(n, h * d)

    attend.module = module  # the model's attention module: its softmax scale is module.scaling
    return attend
