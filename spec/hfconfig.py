"""Reading a Hugging Face ``config.json`` into an expectation.

Keys read (transformers 4.57 and 5.x):

* the language model's keys: a multimodal config's ``text_config`` (Gemma 3, Llama 4, Qwen2-VL);
* ``head_dim``, else Zamba2's ``attention_head_dim``, else JetMoE's and ChatGLM's ``kv_channels``, else
  ``hidden_size // num_attention_heads`` (DBRX: ``d_model // n_heads``; Moonshine: its
  ``decoder_num_attention_heads``), else GPT-J's and CodeGen's ``n_embd // n_head`` (DeepSeek:
  ``qk_rope_head_dim``);
* ``rope_theta``, or 5.x's ``rope_parameters["rope_theta"]``, or GPT-NeoX's ``rotary_emb_base``
  (default 10000);
* ``partial_rotary_factor`` (also inside ``rope_parameters``), GPT-NeoX's ``rotary_pct``, GPT-J's ``rotary_dim``;
* ``rope_scaling`` (4.57), or the scaling keys of ``rope_parameters`` (5.x) when its rope_type is not default
  (Gemma 3's per-layer-type ``rope_parameters``: those of ``full_attention``, else of the first layer type by name
  that has RoPE);
* ``max_position_embeddings`` or GPT-J's ``n_positions`` (how far to test; for ``dynamic`` it is also the original length, as in
  transformers, and testing goes to factor times it; for yarn and longrope it fills a missing
  ``original_max_position_embeddings``, as 4.57 does; a top-level ``original_max_position_embeddings``, as
  Phi-3 has, is the original length, and the factor is then max_position_embeddings / original);
* ``model_type`` and ``rope_interleave``: GPT-J, CodeGen, DeepSeek-V2, Cohere, ERNIE 4.5, GLM, Helium (and the
  others of :data:`INTERLEAVED_MODEL_TYPES`) pair interleaved in place; a config
  with ``rope_interleave: true`` (DeepSeek-V3, where transformers makes it the default, and other MLA
  models) reads interleaved pairs and writes the half layout (convention ``rope_interleave``, as
  transformers' ``apply_rotary_pos_emb_interleave`` and the model repository's own code do); every other
  model pairs half;
* multi-axis RoPE: ``mrope_section`` and ``mrope_interleaved`` from ``rope_scaling`` or ``rope_parameters``
  (Qwen2-VL's ``{"type": "mrope", ...}``, Qwen3-VL, GLM-4.1V, whose text model pairs interleaved);
* the position-id rule of a vision-language model (``ropespec.spec.positions``), by its ``model_type``: Qwen2-VL's temporal
  grid steps (``grid``), Qwen2.5-VL's clock (``seconds``, with ``vision_config.tokens_per_second``, default 4 as
  transformers' config class has it), Qwen2.5-Omni's thinker's (``seconds``, with its ``position_id_per_seconds``,
  default 25), Qwen3-VL's and GLM-4.1V's frames after timestamps (``frames``); and the framing its code relies on
  (``vision_framing``): the Omni thinkers' one text token before and after every vision block (Qwen3-Omni's thinker
  gives a video fractional temporal positions, which no time rule states: its framing alone is read);
* a diffusers transformer's ``config.json`` (its ``_class_name``): FLUX's ``axes_dims_rope`` (base 10000, as
  ``FluxPosEmbed`` is built), HunyuanVideo's ``rope_axes_dim`` and ``rope_theta``, Wan's axes derived as
  ``WanRotaryPosEmbed`` does (h = w = 2 (d // 6), t the rest); head_dim is ``attention_head_dim``, pairs interleaved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ropespec.spec import methods
from ropespec.spec.expectation import Expect, ExpectationError, _is_number, load_json

#: model types whose code pairs interleaved (its rotate_half takes x[..., ::2] and x[..., 1::2], or its complex-form
#: apply_rotary_emb reads pairs (2i, 2i + 1) as one complex number: DeepSeek-V2's, Llama 4's; a text config's
#: ``<model>_text`` reads as its model's, here and in ROPE_INTERLEAVE_MODEL_TYPES); config.json does not
#: say it, the model's code does (transformers 5.25's modeling modules, found by benchmarks/transformers_sweep.py)
INTERLEAVED_MODEL_TYPES = ("gptj", "codegen", "deepseek_v2", "glm4v", "cohere", "cohere2", "cohere2_moe",
                           "ernie4_5", "ernie4_5_moe", "ernie4_5_vl_moe", "glm", "glm4", "glm_ocr", "helium",
                           "moonshine", "moonshine_streaming", "openai_privacy_filter", "pe_video", "pe_video_encoder",
                           "pe_audio", "pe_audio_encoder", "pe_audio_video", "pe_audio_video_encoder",
                           "deepseek_v4", "llama4", "blt", "blt_patcher", "blt_local_encoder", "blt_local_decoder",
                           "blt_global_transformer", "roformer", "ergo")
#: model types that read interleaved pairs and write the half layout where the config names no ``rope_interleave``:
#: DeepSeek-V3's config defaults it to true, the others' MLA attention calls ``apply_rotary_pos_emb_interleave``
#: whatever the config says (transformers 5.25; HY-V4's and HY-V4-VL's from 5.25 on, where 5.24's paired halves and
#: interleaved pairs in place)
ROPE_INTERLEAVE_MODEL_TYPES = ("deepseek_v3", "deepseek_v32", "axk2", "bailing_hybrid", "dots3_note", "glm_moe_dsa",
                               "longcat_flash", "mistral_large4", "hy_v4", "hy_v4_vl")
_NOT_SCALING = ("rope_theta", "partial_rotary_factor")
#: model types whose code turns every pair by -p theta (its rotate_half is cat(x2, -x1)), as their checkpoints were
#: trained: their expectation's direction is reverse
REVERSED_MODEL_TYPES = ("nanochat",)
#: keys transformers' configs keep among the rope parameters that are not part of the rotary table: the model's
#: own length again (Ministral 3, Mistral 4), and their query temperature by position, which the attention applies to
#: the queries after RoPE (``llama_4_scaling_beta``: read as the attention family's keys, _query_temperature)
_NOT_ROTARY = ("max_position_embeddings", "llama_4_scaling_beta")


#: where a config keeps its number of attention heads: most, DBRX's, Moonshine's (its decoder's, as its encoder's),
#: SeamlessM4T's speech encoder's, whose heads the rotary divides hidden_size by
_HEAD_COUNTS = ("num_attention_heads", "n_heads", "decoder_num_attention_heads", "speech_encoder_attention_heads")
#: keys only a config with a rotary embedding has
ROTARY_KEYS = ("rope_theta", "rope_parameters", "rope_scaling", "rotary_emb_base", "rotary_pct", "rotary_dim",
               "partial_rotary_factor", "qk_rope_head_dim", "rope_interleave", "axes_dims_rope", "rope_axes_dim")
#: diffusers transformers with a multi-axis RoPE, by ``_class_name``
DIFFUSERS_CLASSES = ("FluxTransformer2DModel", "HunyuanVideoTransformer3DModel", "WanTransformer3DModel")
_MROPE_KEYS = ("mrope_section", "mrope_interleaved")
#: a multi-axis key's legacy name, which transformers reads as the key (HunyuanOCR's checkpoints' xdrope_section)
_LEGACY_MROPE_KEYS = {"xdrope_section": "mrope_section"}
#: model type -> how its get_rope_index lets a video's temporal positions grow (ropespec.spec.positions.TIME_RULES)
VIDEO_TIME = {"qwen2_vl": "grid", "qwen2_5_vl": "seconds", "qwen2_5_omni_thinker": "seconds", "qwen3_vl": "frames",
              "qwen3_vl_moe": "frames", "glm4v": "frames", "glm4v_moe": "frames"}
#: model type -> where its config keeps the clock of video_time seconds (a key of the config, or of one nested in it),
#: and the value transformers' config class defaults it to
CLOCK = {"qwen2_5_vl": (("vision_config", "tokens_per_second"), 4),
         "qwen2_5_omni_thinker": (("position_id_per_seconds",), 25)}
#: model type -> the text its get_rope_index needs around every vision block (vision_framing: before, after): the Omni
#: thinkers' steps over one token before and one after each block, their <|vision_bos|> and <|vision_eos|>, whatever
#: those tokens are (transformers 5.25). Qwen2-VL's, Qwen2.5-VL's, Qwen3-VL's and GLM-4.1V's prompts are framed as
#: much, but their builders find a block by its tokens' type and need no framing: they keep the default, as their
#: presets do
VISION_FRAMING = {"qwen2_5_omni_thinker": (1, 1), "qwen3_omni_moe_thinker": (1, 1)}
#: model types that use RoPE even where an older config.json names none of ROTARY_KEYS (the 10000 base was implied)
ROPE_MODEL_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "gemma", "gemma2", "phi", "phi3", "gpt_neox",
                    "gptj", "codegen", "stablelm", "starcoder2", "olmo", "cohere", "deepseek_v2", "deepseek_v3",
                    "roformer")


def has_rope(d: dict) -> bool:
    """Whether a config describes a model with a rotary embedding: a rotary key, or a model type known to use RoPE
    (a Falcon config with ``alibi: true`` uses ALiBi instead)."""
    if d.get("_class_name") in DIFFUSERS_CLASSES:
        return True
    d = _text_model(d)
    if d.get("position_embeddings_type") == "rotary":  # the Conformer speech encoders' (Wav2Vec2-Conformer's)
        return True
    if d.get("alibi") is True or d.get("position_embedding_type") not in (None, "rotary", "rope"):
        return any(k in d for k in ROTARY_KEYS) and d.get("alibi") is not True
    return any(k in d for k in ROTARY_KEYS) or d.get("model_type") in ROPE_MODEL_TYPES


def looks_like_hf_config(d: dict) -> bool:
    return any(k in d for k in ("model_type", "hidden_size", "num_attention_heads", "max_position_embeddings",
                                "n_embd", "text_config", "_class_name"))


def _text_model(d: dict) -> dict:
    """The language model's config: multimodal configs (Gemma 3, Llama 4, Qwen2-VL) nest it under
    ``text_config``."""
    inner = d.get("text_config")
    if isinstance(inner, dict) and not any(k in d for k in ("hidden_size", "head_dim", "n_embd", "qk_rope_head_dim")):
        return {"model_type": d.get("model_type"), **inner}
    return d


def checked_layer_type(params: Any) -> str | None:
    """Where ``rope_parameters`` holds one set per layer type (Gemma 3, ModernBERT, OLMo 3), the layer type whose
    RoPE is checked: full attention's, else the first by name that has RoPE (``None`` for a type: no RoPE in those
    layers, as BEAM's full-attention ones); ``None`` where the parameters are one set for every layer."""
    if isinstance(params, dict) and params and all(isinstance(v, dict) or v is None for v in params.values()):
        with_rope = sorted(k for k, v in params.items() if isinstance(v, dict))
        return "full_attention" if "full_attention" in with_rope else with_rope[0] if with_rope else None
    return None


def _layer_config(d: dict, layer_type: str | None) -> dict:
    """``d`` as the layers of ``layer_type`` see it: a config with ``per_layer_config`` (EmbeddingGemma 2, Gemma 4:
    the full-attention layers' wider heads) overrides keys for the layers it names by index."""
    per_layer, types = d.get("per_layer_config"), d.get("layer_types")
    if layer_type is None or not isinstance(per_layer, dict) or not isinstance(types, list):
        return d
    for index, kind in enumerate(types):
        if kind == layer_type:
            over = next((v for k, v in per_layer.items() if str(k).isdigit() and int(k) == index), None)
            return {**d, **over} if isinstance(over, dict) else d
    return d


def _owns_partial_factor(params: dict) -> bool:
    """Whether the rope parameters' method reads partial_rotary_factor as a key of its own (proportional RoPE)."""
    kind = params.get("rope_type", params.get("type"))
    return kind in methods.REGISTRY and "partial_rotary_factor" in methods.get(kind).keys


def _int(d: dict, key: str) -> int:
    v = d.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ExpectationError(f"config.json: {key}", f"must be a positive integer, got {v!r}")
    return v


def from_hf_config(d: dict[str, Any]) -> Expect:
    """The expectation a Hugging Face model config describes."""
    if not isinstance(d, dict):
        raise ExpectationError("config.json", f"must be a JSON object, got {type(d).__name__}")
    if not has_rope(d):
        kind = f"model_type {d.get('model_type')!r}" if d.get("model_type") else "this config"
        raise ExpectationError("config.json", f"{kind} has no rotary embedding (none of {', '.join(ROTARY_KEYS)}, and "
                                              f"not a model type known to use RoPE): there is no RoPE to check against")
    if d.get("_class_name") in DIFFUSERS_CLASSES:
        return _diffusers(d)
    outer, d = d, _text_model(d)
    params = d.get("rope_parameters") or {}
    if not isinstance(params, dict):
        raise ExpectationError("config.json: rope_parameters", "must be an object")
    layer_type = checked_layer_type(params)
    if layer_type is not None:
        params, d = params[layer_type], _layer_config(d, layer_type)
    elif params and all(v is None for v in params.values()):
        params = {}
    if d.get("qk_rope_head_dim"):  # MLA: the rotated slice of each head
        head_dim = _int(d, "qk_rope_head_dim")
    elif d.get("head_dim"):
        head_dim = _int(d, "head_dim")
    elif d.get("attention_head_dim"):  # Zamba2 (its attention is twice hidden_size wide)
        head_dim = _int(d, "attention_head_dim")
    elif d.get("kv_channels"):  # JetMoE, ChatGLM
        head_dim = _int(d, "kv_channels")
    elif "hidden_size" in d or "n_embd" not in d:
        size = "hidden_size" if "hidden_size" in d or "d_model" not in d else "d_model"  # DBRX: d_model, n_heads
        heads = next((k for k in _HEAD_COUNTS if d.get(k) is not None), "num_attention_heads")
        head_dim = _int(d, size) // _int(d, heads)
    else:  # GPT-J, CodeGen
        head_dim = _int(d, "n_embd") // _int(d, "n_head")
    out: dict[str, Any] = {"head_dim": head_dim}
    theta = d.get("rope_theta", params.get("rope_theta", d.get("rotary_emb_base", d.get("rotary_embedding_base",
                                                                                        10000.0))))
    if layer_type is not None and "rope_theta" in params:  # the layer type's own base, not the top-level one kept
        theta = params["rope_theta"]  # beside it (DeepSeek-V4: 10000 there, 160000 for its compressed layers)
    out["rope_theta"] = theta
    if d.get("rotary_dim") is not None:
        out["rotary_dim"] = d["rotary_dim"]
    else:
        # a method that has partial_rotary_factor among its keys (proportional RoPE) reads it from its parameters as
        # its own: which pairs turn, over the whole head, not a narrower rotary
        theirs = {} if _owns_partial_factor(params) else params
        factor = d.get("partial_rotary_factor", theirs.get("partial_rotary_factor", d.get("rotary_pct")))
        if d.get("qk_rope_head_dim") and _is_number(factor) and isinstance(d.get("head_dim"), int) \
                and int(d["head_dim"] * factor) == head_dim:
            factor = None  # the factor of the whole head that is the rotated slice (dots.llm3's MLA)
        if factor is not None and factor != 1.0:
            out["partial_rotary_factor"] = factor
    model_type = str(d.get("model_type") or "").removesuffix("_text")  # a multimodal model's text config: its own
    if model_type in REVERSED_MODEL_TYPES:
        out["direction"] = "reverse"
    interleave = d.get("rope_interleave", model_type in ROPE_INTERLEAVE_MODEL_TYPES)
    if interleave is True:
        out["convention"] = "rope_interleave"
    elif model_type in INTERLEAVED_MODEL_TYPES:
        out["convention"] = "interleaved"
    pos_key = "max_position_embeddings" if "max_position_embeddings" in d or "n_positions" not in d else "n_positions"
    max_pos = d.get(pos_key)
    if max_pos is not None:
        out["max_position"] = _int(d, pos_key)
    top_original = d.get("original_max_position_embeddings")  # Phi-3 keeps it at the top level
    scaling = d.get("rope_scaling")
    for source in (scaling, params):  # M-RoPE rides in the scaling dict, or in 5.x's rope_parameters
        if isinstance(source, dict):
            for legacy, key in _LEGACY_MROPE_KEYS.items():
                if legacy in source and key in source and list(source[legacy]) != list(source[key]):
                    raise ExpectationError(f"config.json: rope_scaling.{legacy}",
                                           f"its legacy name for {key} must equal {key} {source[key]}, got "
                                           f"{source[legacy]}")
                if legacy in source and key not in out:
                    out[key] = source[legacy]
            out.update({k: source[k] for k in _MROPE_KEYS if k in source and k not in out})
    if isinstance(scaling, dict) and scaling.get("rope_type", scaling.get("type")) == "mrope":
        scaling = {k: v for k, v in scaling.items() if k not in ("type", "rope_type") + _MROPE_KEYS} or None
    if scaling is None and methods.scales(params.get("rope_type", params.get("type", "default"))):
        scaling = {k: v for k, v in params.items()
                   if k not in _NOT_SCALING or (k == "partial_rotary_factor" and _owns_partial_factor(params))}
    if scaling is not None:
        if not isinstance(scaling, dict):
            raise ExpectationError("config.json: rope_scaling", f"must be an object or null, got {type(scaling).__name__}")
        _query_temperature(scaling, top_original, out)
        if scaling.get("mscale_all_dim") and model_type in NO_SOFTMAX_MSCALE_MODEL_TYPES:
            out["yarn_softmax_mscale"] = False  # its attention's softmax scale is 1/sqrt(d) alone
        scaling = {k: v for k, v in scaling.items() if k not in _MROPE_KEYS + tuple(_LEGACY_MROPE_KEYS) + _NOT_ROTARY}
        for key in ("rope_type", "type"):  # another name a config gives a method (HunYuan's "xdrope": dynamic)
            if key in scaling:
                scaling[key] = methods.named_in_config(scaling[key])
        rt = scaling.get("rope_type", scaling.get("type"))
        if rt in methods.REGISTRY:  # what the method reads the config's dict to mean (HunYuan's alpha: a fixed base)
            scaling = methods.get(rt).read_config(scaling)
            rt = scaling.get("rope_type", scaling.get("type"))
        if rt in methods.REGISTRY and "mrope_section" in out:  # multi-axis RoPE takes no scaling: a moved base is its
            r = out.get("rotary_dim") or int(out["head_dim"] * out.get("partial_rotary_factor", 1.0))  # ladder's own
            moved = methods.get(rt).moved_base(out["rope_theta"], scaling, r)
            if moved is not None:
                out["rope_theta"], scaling, rt = moved, None, None
        if not methods.scales(rt):
            scaling = None
        elif max_pos is not None and rt in methods.REGISTRY:  # an unknown type is the expectation's to refuse
            def top():
                return _int(d, "original_max_position_embeddings") if top_original is not None else None
            try:
                methods.get(rt).from_config(scaling, max_pos, top, out)
            except ExpectationError as e:
                raise ExpectationError(f"config.json: {e.field}", e.problem) from None
        out["rope_scaling"] = scaling
    video_time, framing = VIDEO_TIME.get(outer.get("model_type")), VISION_FRAMING.get(outer.get("model_type"))
    if video_time is not None and "mrope_section" in out:
        out["video_time"] = video_time
        if video_time == "seconds":
            (*path, key), default = CLOCK[outer["model_type"]]
            holder = outer
            for step in path:
                holder = holder.get(step) if isinstance(holder.get(step), dict) else {}
            out["tokens_per_second"] = holder.get(key, default)
    if framing is not None and "mrope_section" in out:
        out["vision_framing"] = list(framing)
    try:
        return Expect.from_dict(out)
    except ExpectationError as e:
        raise ExpectationError(f"config.json: {e.field}", e.problem) from None


#: model types whose config may carry YaRN's mscale_all_dim but whose attention's softmax scale is 1/sqrt(d) alone
#: (transformers 5.24: configurations naming mscale_all_dim whose modeling never applies it); every other reads as
#: DeepSeek's, whose attention multiplies it by g(s, mscale_all_dim)^2 (yarn_apply_mscale), as its forks do
NO_SOFTMAX_MSCALE_MODEL_TYPES = ("ministral3", "hunyuan_vl")


def _query_temperature(scaling: dict, top_original, out: dict) -> None:
    """Ministral 3's and Mistral 4's query temperature: ``llama_4_scaling_beta`` among the rope parameters, over their
    ``original_max_position_embeddings`` (transformers' get_llama_4_attn_scale: floor(p / L), offset 0), which their
    attention multiplies the queries by after RoPE: the attention family's keys (Llama 4's own temperature tunes its
    NoPE layers only, which have no RoPE to check, and is not read)."""
    beta = scaling.get("llama_4_scaling_beta")
    if beta in (None, 0):
        return
    length = scaling.get("original_max_position_embeddings", top_original)
    if length is None:
        raise ExpectationError("config.json: rope_parameters.original_max_position_embeddings",
                               "must be given with llama_4_scaling_beta (the query temperature's step)")
    out.update(query_temperature_beta=beta, query_temperature_length=length, query_temperature_offset=0)


def _diffusers(d: dict) -> Expect:
    """A diffusers transformer's config: its attention head dim and the axes its rotary embedding builds."""
    cls = d["_class_name"]
    head_dim = _int(d, "attention_head_dim")
    out: dict[str, Any] = {"head_dim": head_dim, "convention": "interleaved"}
    if cls == "FluxTransformer2DModel":
        out["axes_dims_rope"] = d.get("axes_dims_rope", [16, 56, 56])
    elif cls == "HunyuanVideoTransformer3DModel":
        out["axes_dims_rope"] = d.get("rope_axes_dim", [16, 56, 56])
        out["rope_theta"] = d.get("rope_theta", 256.0)
    else:  # WanRotaryPosEmbed: h = w = 2 (d // 6), t the rest
        hw = 2 * (head_dim // 6)
        out["axes_dims_rope"] = [head_dim - 2 * hw, hw, hw]
        out["max_position"] = d.get("rope_max_seq_len", 1024)
    try:
        return Expect.from_dict(out)
    except ExpectationError as e:
        raise ExpectationError(f"config.json: {e.field}", e.problem) from None


def read(path: str | Path) -> Expect:
    return from_hf_config(load_json(read_text(path, "config.json"), "config.json"))


def read_text(path: str | Path, what: str) -> str:
    """A JSON file's text; one-line ExpectationError when it cannot be read or is not UTF-8 text."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ExpectationError(what, f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ExpectationError(what, f"{path}: not UTF-8 text (a binary file?)") from None
