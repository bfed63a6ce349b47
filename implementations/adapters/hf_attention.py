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

import numpy as np

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
        if not expect.params("attention").turns:
            raise NotImplementedError(f"transformers' {model_type} attention turns q and k: not a NoPE layer")
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
    if not block.turns:
        raise NotImplementedError("transformers' ministral3 attention turns q and k: not a NoPE layer")
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


def llama4(expect):
    """transformers' Llama 4 text attention as one of its NoPE layers computes it: Llama4TextAttention.forward itself
    (layer 0, no_rope_layers [0]: no RoPE, no qk norm), its query temperature log1p(floor((p + 1) / floor_scale))
    attn_scale + 1 (attn_temperature_tuning; the expectation's beta and length, offset 1) and eager_attention_forward
    with transformers' additive causal mask. q, k and v are handed in one hidden state through projections that pick
    each out of it (identity blocks, o_proj the identity back), so the module's own arithmetic is all there is. The
    module takes the positions of a call from its cache (past_seen_tokens + arange(n), as a model's rows come in order):
    the rows are handed over sorted by position, to a cache that says the call's first position was seen already and
    keeps nothing, and the output rows are put back in the order given; positions that are no run of consecutive
    integers are declined as no call the model makes. An expectation with RoPE is declined (its RoPE layers carry no
    temperature and turn by apply_rotary_emb, which the rope family checks: hf_models' llama4)."""
    try:
        import torch
        import transformers
        from transformers.models.llama4 import modeling_llama4 as modeling
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
    block = expect.params("attention")
    if block.turns:
        raise NotImplementedError("transformers' llama4 attention is checked on its NoPE layers (attention_nope true): "
                                  "its RoPE layers carry no temperature, and their apply_rotary_emb is the rope family's")
    if block.tempered and block.query_temperature_offset != 1:
        raise NotImplementedError("transformers' llama4 steps its query temperature at floor((p + 1) / floor_scale): "
                                  "offset 1")
    if expect.method not in _CHECKED_METHODS[:1]:  # the default method: no table, so no scaling of it
        raise NotImplementedError("a NoPE layer has no table to scale: rope_scaling says nothing there")
    d, h, h_kv = expect.head_dim, expect.n_heads, expect.n_kv_heads
    width = (h + 2 * h_kv) * d  # the hidden state: q | k | v
    config = transformers.Llama4TextConfig(
        hidden_size=width, num_attention_heads=h, num_key_value_heads=h_kv, head_dim=d, num_hidden_layers=1,
        no_rope_layers=[0], attn_temperature_tuning=block.tempered, floor_scale=block.query_temperature_length,
        attn_scale=block.query_temperature_beta, max_position_embeddings=expect.max_position, use_qk_norm=False)
    config._attn_implementation = "eager"
    module = modeling.Llama4TextAttention(config, layer_idx=0).eval()
    if module.use_rope:
        raise NotImplementedError("transformers' Llama4TextConfig made layer 0 a RoPE layer: no NoPE layer to check")
    with torch.no_grad():
        for proj, start in ((module.q_proj, 0), (module.k_proj, h * d), (module.v_proj, (h + h_kv) * d)):
            proj.weight.zero_()
            proj.weight[:, start:start + proj.weight.shape[0]] = torch.eye(proj.weight.shape[0])
        module.o_proj.weight.zero_()
        module.o_proj.weight[: h * d] = torch.eye(h * d)

    class Seen:
        """A cache that says how many tokens came before the call and keeps nothing: the module reads its positions
        off it (past_seen_tokens + arange(n)) and attends to the keys of the call alone."""

        def __init__(self, first: int):
            self.first = first

        def get_seq_length(self, layer_idx=0):
            return self.first

        def update(self, key_states, value_states, layer_idx, *args, **kwargs):
            return key_states, value_states

    def attend(q, k, v, positions, causal):
        pos = np.asarray(positions.cpu() if hasattr(positions, "cpu") else positions, dtype=np.int64)
        order = np.argsort(pos, kind="stable")
        first = int(pos[order[0]])
        if not np.array_equal(pos[order], np.arange(first, first + len(pos))):
            raise NotImplementedError("Llama 4's attention takes the positions of a call as a run of consecutive "
                                      "integers (its cache's length plus the row index)")
        idx = torch.as_tensor(order, device=q.device)
        hidden = torch.cat([q[idx], k[idx], v[idx]], dim=1)[None].to(module.q_proj.weight.dtype)
        n = len(pos)
        mask = None
        if causal:
            mask = torch.full((n, n), torch.finfo(hidden.dtype).min, dtype=hidden.dtype, device=q.device)
            mask = torch.triu(mask, diagonal=1)[None, None]
        with torch.no_grad():
            out, _ = module(hidden, None, mask, Seen(first))
        back = torch.empty_like(idx)
        back[idx] = torch.arange(n, device=q.device)
        return out[0, :, : h * d][back].to(q.dtype)

    attend.module = module
    module.to(dtype=getattr(torch, expect.dtype))
    return attend


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
