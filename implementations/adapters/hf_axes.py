"""transformers' multi-axis rotary code as factories: the vision-language models' text M-RoPE and their vision
towers' 2-D RoPE, each the model's rotary embedding class (built from a config, no weights) and its own apply
function, called as the model calls them, on rows x (n, head_dim) at positions (n, A).

    ropespec check ropespec.implementations.adapters.hf_axes:qwen2_vl --array torch --expect qwen2-vl-7b
    ropespec check ropespec.implementations.adapters.hf_axes:qwen3_vl --array torch --dtype bfloat16 --expect qwen3-vl-8b
    ropespec check ropespec.implementations.adapters.hf_axes:pixtral --array torch --expect pixtral-12b
    ropespec check ropespec.implementations.adapters.hf_axes:dinov3 --array torch --expect dinov3-vitl16

Factories: ``qwen2_vl``, ``qwen2_5_vl``, ``qwen3_vl``, ``qwen3_5``, ``glm4v`` (text: position_ids (3, batch, seq), the merged
table from the rotary embedding's forward, ``apply_rotary_pos_emb``), ``qwen2_vl_vision`` and ``qwen3_5_vision`` (the vision towers:
position_ids (n, 2), ``apply_rotary_pos_emb_vision``) and ``pixtral`` (``PixtralVisionRotaryEmbedding``);
``llama4_vision``, ``dinov3`` (``sapiens2``, ``eomt_dinov3``: its code as their own), ``efficientloftr`` and
``sam3_vit`` (``sam3_vit_global``) are written out where a model's code is called otherwise (a fixed table of every
patch, pixel values or a feature map in, a layer's own scaled grid); every factory's preset is in
:data:`CHECKED_UNDER`. ``qwen2_vl_table``, ``qwen3_vl_table``, ``glm4v_table`` and ``pixtral_table`` are the rotary embeddings alone, as table
builders (``--form table``): the merged per-dim table their forward returns. Needs
``transformers`` (``pip install -e '.[hf]'``); without it they decline. What a model's code cannot express (another
kind of axes, convention, number of axes) is declined, so that a verdict is always about the model's own code.
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass, replace

ARRAY = "torch"


@dataclass(frozen=True)
class Model:
    """How one model's multi-axis rotary code is built and called."""

    module: str  # transformers.models.<module>.modeling_<module>
    config: str  # its config class
    rotary: str  # its rotary embedding class
    kind: str  # the axes kind its code computes (ropespec.spec.expectation.AXES_KINDS)
    convention: str = "half"
    n_axes: int = 3
    partial: bool = False  # a partial_rotary_factor in its rope_parameters
    call: str = "text"  # "text": position_ids (3, batch, seq); "vision": (n, 2) and apply_rotary_pos_emb_vision;
    # "pixtral": (n, 2) and apply_rotary_pos_emb(..., unsqueeze_dim=0); "sam2": (n, 2) and apply_rotary_pos_emb_2d
    #: a vision tower's config keys for its width, heads and depth (Qwen2-VL's names; MLCD's are a text model's)
    sizes: tuple[str, str, str] = ("embed_dim", "num_heads", "depth")
    #: the model reads a patch's (h, w) where the expectation's axes are (w, h) (its table puts w's pairs first)
    flip: bool = False
    #: the model's position builder counts patches from 1 (Inkling 2's, Llama 4's): the expectation's axes_offset,
    #: added by the adapter as the builder adds it
    offset: tuple[int, ...] | None = None
    #: its pairs are dealt one of each axis per frequency (Kimi K2.5's [w0, h0, w1, h1, ...]: axes_interleaved)
    per_frequency: bool = False
    #: a config key that must say the head dim too (HY-V4-VL's MLA sets head_dim from qk_rope_head_dim)
    rope_dim_key: str | None = None
    #: the apply function its attention calls, where not its call's own (:data:`APPLY`): EdgeTAM's self-attention has
    #: its own name for SAM 2's
    apply: str = ""
    #: the preset of the released model's rotary, under which tests/test_real_multi_axis.py and the transformers
    #: sweep check this code
    preset: str = ""


#: the apply function each call's attention calls, unless the model names its own
APPLY = {"text": "apply_rotary_pos_emb", "vision": "apply_rotary_pos_emb_vision", "pixtral": "apply_rotary_pos_emb",
         "sam2": "apply_rotary_pos_emb_2d"}


def _as_installed(m: Model, modeling) -> Model:
    """``m`` as the installed module computes it: a text model whose module holds ``apply_rotary_pos_emb_interleave``
    and no ``apply_rotary_pos_emb`` (HY-V4-VL from transformers 5.25 on; before, its apply function wrote interleaved
    pairs back in place) calls that one, which reads interleaved pairs and writes them in the half layout (DeepSeek's
    form: the rope_interleave convention; the attention scores are the same, its rows' layout is not)."""
    if m.call == "text" and not hasattr(modeling, "apply_rotary_pos_emb") and hasattr(modeling,
                                                                                      "apply_rotary_pos_emb_interleave"):
        return replace(m, convention="rope_interleave", apply="apply_rotary_pos_emb_interleave")
    return replace(m, apply=m.apply or APPLY[m.call])


#: SAM 2 video's config keys for its memory attention's width, heads and downsample rate (head_dim = width / (rate
#: heads))
_SAM2 = ("memory_attention_hidden_size", "memory_attention_num_attention_heads", "memory_attention_downsample_rate")

MODELS = {
    "qwen2_vl": Model("qwen2_vl", "Qwen2VLTextConfig", "Qwen2VLRotaryEmbedding", "chunked", preset="qwen2-vl-7b"),
    "qwen2_5_vl": Model("qwen2_5_vl", "Qwen2_5_VLTextConfig", "Qwen2_5_VLRotaryEmbedding", "chunked", preset="qwen2.5-vl-7b"),
    "qwen3_vl": Model("qwen3_vl", "Qwen3VLTextConfig", "Qwen3VLTextRotaryEmbedding", "interleaved", preset="qwen3-vl-8b"),
    "qwen3_5": Model("qwen3_5", "Qwen3_5TextConfig", "Qwen3_5TextRotaryEmbedding", "interleaved", preset="qwen3.5", partial=True),
    # HunyuanOCR's four axes (p, w, h, image) over a ladder at the NTK-alpha base theta alpha^(d/(d - 2)), stated as
    # rope_theta (transformers 5.24 splits its table by [2 s for s in sections]: docs/findings.md)
    "hunyuan_vl": Model("hunyuan_vl", "HunYuanVLTextConfig", "HunYuanVLRotaryEmbedding", "chunked", preset="hunyuanocr", n_axes=4),
    "cosmos3_edge": Model("cosmos3_edge", "Cosmos3EdgeTextConfig", "Cosmos3EdgeTextRotaryEmbedding", "interleaved", preset="cosmos3-edge"),
    "glm_image": Model("glm_image", "GlmImageTextConfig", "GlmImageTextRotaryEmbedding", "chunked", preset="glm-image", partial=True),
    "hy_v4_vl": Model("hy_v4_vl", "HYV4VLTextConfig", "HYV4VLRotaryEmbedding", "interleaved", preset="hy-v4-vl", convention="interleaved",
                      rope_dim_key="qk_rope_head_dim"),
    "glm4v": Model("glm4v", "Glm4vTextConfig", "Glm4vTextRotaryEmbedding", "chunked", preset="glm-4.1v", convention="interleaved",
                   partial=True),
    "qwen2_vl_vision": Model("qwen2_vl", "Qwen2VLVisionConfig", "Qwen2VLVisionRotaryEmbedding", "per-axis", preset="qwen2-vl-vision",
                             n_axes=2, call="vision"),
    "qwen3_5_vision": Model("qwen3_5", "Qwen3_5VisionConfig", "Qwen3_5VisionRotaryEmbedding", "per-axis", preset="qwen3.5-vision", n_axes=2,
                            call="vision", sizes=("hidden_size", "num_heads", "depth")),
    "pixtral": Model("pixtral", "PixtralVisionConfig", "PixtralVisionRotaryEmbedding", "parity", preset="pixtral-12b", n_axes=2,
                     call="pixtral"),
    "mlcd": Model("mlcd", "MLCDVisionConfig", "MLCDRotaryEmbedding", "per-axis", preset="mlcd-vit-bigg", n_axes=2, call="vision",
                  sizes=("hidden_size", "num_attention_heads", "num_hidden_layers")),
    # vision towers of Qwen2-VL's code under their own names, and two that deal its table otherwise
    "exaone4_5": Model("exaone4_5", "Exaone4_5_VisionConfig", "Exaone4_5_VisionRotaryEmbedding", "per-axis", preset="exaone-4.5-vision", n_axes=2,
                       call="vision", sizes=("hidden_size", "num_heads", "depth")),
    "glm5_next": Model("glm5_next", "Glm5NextVisionConfig", "Glm5NextVisionRotaryEmbedding", "per-axis", preset="glm-5-next-vision", n_axes=2,
                       call="vision", sizes=("hidden_size", "num_heads", "depth")),
    "lfm3_vl": Model("lfm3_vl", "Lfm3VlVisionConfig", "Lfm3VlVisionRotaryEmbedding", "per-axis", preset="lfm3-vl-vision", n_axes=2,
                     call="vision", sizes=("hidden_size", "num_attention_heads", "num_hidden_layers")),
    "video_llama_3": Model("video_llama_3", "VideoLlama3VisionConfig", "VideoLlama3VisionRotaryEmbedding", "per-axis", preset="videollama3-vision",
                           n_axes=2, call="vision", sizes=("hidden_size", "num_attention_heads", "num_hidden_layers")),
    "llava_onevision1_5": Model("llava_onevision1_5", "LlavaOnevision15VisionConfig", "LlavaOnevision15VisionRotaryEmbedding",
                                "per-axis", preset="llava-onevision-1.5-vision", n_axes=2, call="vision",
                                sizes=("hidden_size", "num_heads", "depth")),
    "ovis2_5": Model("ovis2_5", "Ovis2_5VisionConfig", "Ovis2_5VisionRotaryEmbedding", "per-axis", preset="ovis2.5-vision",
                     n_axes=2, call="vision", sizes=("hidden_size", "num_attention_heads", "num_hidden_layers")),
    "kimi_k25": Model("kimi_k25", "Kimi_K25VisionConfig", "Kimi_K25VisionRotaryEmbedding", "per-axis", preset="kimi-k2.5-vision", n_axes=2,
                      call="vision", sizes=("hidden_size", "num_attention_heads", "num_hidden_layers"), flip=True,
                      per_frequency=True),
    # SAM 2's memory attention RoPE (and its kin): interleaved [w | h] ladders, apply_rotary_pos_emb_2d
    "sam2_video": Model("sam2_video", "Sam2VideoConfig", "Sam2VideoVisionRotaryEmbedding", "per-axis", preset="sam2-video",
                        convention="interleaved", n_axes=2, call="sam2", sizes=_SAM2),
    "edgetam_video": Model("edgetam_video", "EdgeTamVideoConfig", "EdgeTamVideoVisionRotaryEmbedding", "per-axis", preset="sam2-video",
                           convention="interleaved", n_axes=2, call="sam2", sizes=_SAM2,
                           apply="apply_rotary_pos_emb_2d_self_attn"),
    "sam3_tracker_video": Model("sam3_tracker_video", "Sam3TrackerVideoConfig", "Sam3TrackerVideoVisionRotaryEmbedding",
                                "per-axis", preset="sam2-video", convention="interleaved", n_axes=2, call="sam2", sizes=_SAM2),
    "inkling2": Model("inkling2", "Inkling2VisionConfig", "Inkling2VisionRotaryEmbedding", "per-axis", preset="inkling2-vision",
                      convention="interleaved", n_axes=2, call="vision",
                      sizes=("hidden_size", "num_attention_heads", "num_hidden_layers"), flip=True, offset=(1, 1)),
}


def _decline(name: str, m: Model, expect) -> None:
    if expect.axes_kind() != m.kind:
        raise NotImplementedError(f"transformers' {name} code computes {m.kind} multi-axis RoPE, not "
                                  f"{expect.axes_kind() or '1-D RoPE'}")
    if expect.n_axes != m.n_axes:
        raise NotImplementedError(f"transformers' {name} code has {m.n_axes} axes, not {expect.n_axes}")
    if expect.convention != m.convention:
        raise NotImplementedError(f"transformers' {name} code pairs {m.convention}, not {expect.convention}")
    if expect.rotary_dim != expect.head_dim and not m.partial:
        raise NotImplementedError(f"transformers' {name} code rotates every dim (no partial rotary)")
    if expect.axes_interleaved != m.per_frequency:
        raise NotImplementedError(f"transformers' {name} code deals its pairs "
                                  f"{'one of each axis per frequency' if m.per_frequency else 'in halves'} "
                                  f"(axes_interleaved {str(m.per_frequency).lower()})")
    if m.call in ("vision", "sam2") and (expect.axes_offset, expect.axes_scale) != (m.offset, None):
        raise NotImplementedError(f"transformers' {name} turns its patches by their "
                                  f"{'index + 1 (axes_offset [1, 1])' if m.offset else 'index'}, unscaled")
    if m.kind == "per-axis" and expect.axes_dims_rope != (expect.head_dim // 2,) * 2:
        raise NotImplementedError(f"transformers' {name} code splits the head into two halves of "
                                  f"{expect.head_dim // 2} dims, not {list(expect.axes_dims_rope)}")


def config_for(name: str, expect):
    """The model's config computing ``expect``'s rotary embedding, one head of head_dim."""
    import transformers

    m = MODELS[name]
    cls = getattr(transformers, m.config)
    d = expect.head_dim
    if m.call in ("vision", "sam2"):
        width, heads, depth = m.sizes
        kv = {"num_key_value_heads": 1} if "num_key_value_heads" in inspect.signature(cls.__init__).parameters else {}
        return cls(**{width: d, heads: 1, depth: 1}, **kv,
                   rope_parameters={"rope_type": "axial", "rope_theta": expect.rope_theta})
    if m.call == "pixtral":
        return cls(hidden_size=d, num_attention_heads=1, num_hidden_layers=1, intermediate_size=d,
                   rope_parameters={"rope_type": "axial", "rope_theta": expect.rope_theta})
    params = {"rope_type": "default", "rope_theta": expect.rope_theta, "mrope_section": list(expect.mrope_section)}
    if m.partial and expect.rotary_dim != d:
        params["partial_rotary_factor"] = expect.rotary_dim / d
    return cls(hidden_size=d, num_attention_heads=1, num_key_value_heads=1, num_hidden_layers=1, head_dim=d,
               max_position_embeddings=expect.max_position, rope_parameters=params,
               **({m.rope_dim_key: d} if m.rope_dim_key else {}))


def _torch():
    try:
        import torch
    except ImportError:
        raise NotImplementedError("torch is not installed") from None
    return torch


def _modeling(module: str):
    """transformers' ``modeling_<module>`` module itself (not through its package's lazy import, which may ask for
    what the rotary code does not use: SAM 3's torchvision); NotImplementedError without transformers."""
    try:
        return importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None


def _rotary(name: str, m: Model, expect):
    """The model's modeling module and its rotary embedding built for ``expect``, once the expectation is one its code
    can express (else the factory declines: NotImplementedError, also when transformers is missing)."""
    modeling = _modeling(m.module)
    m = _as_installed(m, modeling)
    _decline(name, m, expect)
    return modeling, getattr(modeling, m.rotary)(config_for(name, expect)), m


def factory(name: str):
    """make(expect) running transformers' ``name`` multi-axis rotary code on rows x (n, head_dim), positions (n, A)."""
    if name not in MODELS:
        raise ValueError(f"model: one of {', '.join(MODELS)}, got {name!r}")
    m = MODELS[name]

    def make(expect):
        torch = _torch()
        modeling, rotary, m = _rotary(name, MODELS[name], expect)
        apply = getattr(modeling, m.apply)

        def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
            rotary.to(x.device)
            with torch.no_grad():
                if m.call == "text":  # the text model: position_ids (3, batch, seq), q (batch, heads, seq, dim)
                    cos, sin = rotary(x, positions.T[:, None, :])
                    q = x[None, None]
                    return apply(q, q, cos, sin, unsqueeze_dim=1)[0][0, 0]
                if m.flip:  # the model's (h, w) from the expectation's (w, h)
                    positions = positions[:, [1, 0]]
                if m.offset:  # its position builder's patches counted from 1
                    positions = positions + torch.tensor(m.offset, device=positions.device, dtype=positions.dtype)
                cos, sin = rotary(x, positions)  # the vision towers: position_ids (n, 2), (h, w) per patch
                if m.call == "vision":  # q (n, heads, dim)
                    return apply(x[:, None], x[:, None], cos, sin)[0][:, 0]
                if m.call == "sam2":  # SAM 2's memory attention: q (batch, heads, n, dim), cos (n, dim), (w, h) rows
                    q = x[None, None]
                    return apply(q, q, cos, sin)[0][0, 0]
                q = x[None, None]  # Pixtral's attention: q (batch, heads, n, dim), cos (n, dim)
                return apply(q, q, cos, sin, unsqueeze_dim=0)[0][0, 0]

        return rope

    make.__name__ = name
    make.axes = (m.kind,)
    return make


def table_factory(name: str):
    """make(expect) returning the model's rotary embedding as a table builder, ``table(positions (n, A)) -> (cos,
    sin)``: the merged per-dim table its forward returns (``--form table``)."""
    m = MODELS[name]

    def make(expect):
        torch = _torch()
        _, rotary, _ = _rotary(name, m, expect)

        def table(positions: "torch.Tensor"):
            like = torch.zeros(1, dtype=getattr(torch, expect.dtype), device=positions.device)
            rotary.to(positions.device)
            with torch.no_grad():
                if m.call == "text":
                    cos, sin = rotary(like, positions.T[:, None, :])
                    return cos[0], sin[0]
                return rotary(like, positions)

        return table

    make.__name__ = make.__qualname__ = f"{name}_table"
    make.axes = (m.kind,)
    return make


def llama4_vision(expect):
    """transformers' Llama4VisionRotaryEmbedding and vision_apply_rotary_emb as Llama 4's vision encoder calls them:
    its fixed table of every patch of a grid of max_position patches per side (patch index row * side + column; the
    class token's row, angle 0, is the table's last and no grid position), read at each row's (x, y) = (column, row)
    and applied to q (1, n, 1, head_dim) as complex pairs. It computes per-axis ladders [d/2 | d/2], interleaved
    pairs, each axis offset by 1 (the llama-4-vision preset); other expectations are declined."""
    torch = _torch()
    try:
        from transformers import Llama4VisionConfig
        from transformers.models.llama4 import modeling_llama4 as modeling
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
    d, side = expect.head_dim, expect.max_position
    if (expect.axes_kind() != "per-axis" or expect.axes_dims_rope != (d // 2, d // 2) or expect.convention != "interleaved"
            or expect.axes_offset != (1, 1) or expect.rotary_dim != d):
        raise NotImplementedError("transformers' Llama 4 vision rotary computes per-axis ladders [d/2 | d/2] of "
                                  "interleaved pairs, each axis offset by 1 (the llama-4-vision preset)")
    config = Llama4VisionConfig(hidden_size=d, num_attention_heads=1, image_size=14 * side, patch_size=14,
                                rope_parameters={"rope_type": "default", "rope_theta": expect.rope_theta})
    rotary = modeling.Llama4VisionRotaryEmbedding(config)

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        with torch.no_grad():
            freqs_ci = rotary(x).to(x.device)  # (side^2 + 1, 1, d/2): every patch, then the class token
            idx = (positions[:, 1] * side + positions[:, 0]).long()
            q = x[None, :, None, :]  # (batch, patches, heads, head_dim), as the encoder's attention holds q
            return modeling.vision_apply_rotary_emb(q, q, freqs_ci[idx])[0][0, :, 0]

    return rope


def _dinov3_like(module: str, config_class: str, rotary_class: str, model: str, in_parameters: bool = False):
    """make(expect) of a ViT whose rotary is DINOv3's RopePositionEmbedding (DINOv3's, Sapiens 2's, EoMT-DINOv3's;
    ``in_parameters``: its config takes the base in rope_parameters, EoMT's, not as rope_theta)."""

    def make(expect):
        return _dinov3_rope(expect, module, config_class, rotary_class, model, in_parameters)

    make.__name__ = make.__qualname__ = module.removesuffix("_vit")
    make.__doc__ = _dinov3_rope.__doc__.replace("DINOv3ViTRopePositionEmbedding", rotary_class).replace("DINOv3's ViT",
                                                                                                    f"{model}'s ViT")
    make.axes = ("per-axis",)
    return make


def _dinov3_rope(expect, module: str, config_class: str, rotary_class: str, model: str, in_parameters: bool = False):
    """transformers' DINOv3ViTRopePositionEmbedding and apply_rotary_pos_emb as DINOv3's ViT calls them: the table of
    every patch of an H x H grid (H = max_position) from a pixel_values of H x H patches, read at each row's (h, w) =
    (row, column), patch index h H + w, and applied to q (1, heads, n, head_dim) with no prefix tokens. It computes
    per-axis ladders [d/2 | d/2] of half pairs over patch centres normalised to [-1, 1] times 2 pi: offset 0.5 - H/2
    and scale 4 pi/H on each axis (the dinov3-vitl16 preset); other expectations are declined."""
    torch = _torch()
    modeling = _modeling(module)
    import transformers

    d, side = expect.head_dim, expect.max_position
    centred = ((0.5 - side / 2,) * 2, (4 * math.pi / side,) * 2)
    if (expect.axes_kind() != "per-axis" or expect.axes_dims_rope != (d // 2, d // 2) or expect.convention != "half"
            or expect.rotary_dim != d or d % 4 or not _same(centred, (expect.axes_offset, expect.axes_scale))):
        raise NotImplementedError(f"transformers' {model} rotary computes per-axis ladders [d/2 | d/2] of half pairs over "
                                  "patch centres in [-1, 1] times 2 pi: axes_offset 0.5 - H/2 and axes_scale 4 pi/H, H "
                                  "= max_position (the dinov3-vitl16 preset)")
    base = ({"rope_parameters": {"rope_type": "default", "rope_theta": expect.rope_theta}} if in_parameters
            else {"rope_theta": expect.rope_theta})
    config = getattr(transformers, config_class)(hidden_size=d, num_attention_heads=1, image_size=16 * side,
                                                 patch_size=16, **base)
    rotary = getattr(modeling, rotary_class)(config).eval()

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        with torch.no_grad():
            pixels = torch.zeros(1, 3, 16 * side, 16 * side, dtype=x.dtype, device=x.device)
            cos, sin = rotary(pixels)  # (side^2, d): every patch, row by row
            idx = (positions[:, 0] * side + positions[:, 1]).long()
            q = x[None, None]  # (batch, heads, n, head_dim), as the ViT's attention holds q
            return modeling.apply_rotary_pos_emb(q, q, cos[idx], sin[idx])[0][0, 0]

    return rope


dinov3 = _dinov3_like("dinov3_vit", "DINOv3ViTConfig", "DINOv3ViTRopePositionEmbedding", "DINOv3")
sapiens2 = _dinov3_like("sapiens2", "Sapiens2Config", "Sapiens2RopePositionEmbedding", "Sapiens 2")
eomt_dinov3 = _dinov3_like("eomt_dinov3", "EomtDinov3Config", "EomtDinov3RotaryEmbedding", "EoMT-DINOv3",
                           in_parameters=True)


def efficientloftr(expect):
    """transformers' EfficientLoFTRRotaryEmbedding and apply_rotary_pos_emb as EfficientLoFTR's coarse attention calls
    them: the table its forward forms for a feature map whose aggregated grid is max_position patches per side
    (compute_embeddings: row i and column j counted from 1, i on the even pairs and j on the odd ones of one ladder),
    read at each row's (h, w) and applied over the whole hidden size before the heads are split (q of (1, n, 1,
    hidden)). It computes per-axis ladders [h | w] of hidden / 2 dims dealt one pair of each axis per frequency,
    interleaved pairs, each axis offset by 1 (the efficientloftr preset); other expectations are declined."""
    torch = _torch()
    modeling = _modeling("efficientloftr")
    import transformers

    d, side = expect.head_dim, expect.max_position
    if (expect.axes_kind() != "per-axis" or expect.axes_dims_rope != (d // 2, d // 2) or not expect.axes_interleaved
            or expect.convention != "interleaved" or expect.rotary_dim != d or expect.axes_offset != (1, 1)
            or expect.axes_scale is not None or d % 16):
        raise NotImplementedError("transformers' EfficientLoFTR rotary computes per-axis ladders [h | w] of d/2 dims "
                                  "dealt one pair of each per frequency, interleaved pairs, rows and columns counted "
                                  "from 1 (the efficientloftr preset)")
    # 8 heads and its partial_rotary_factor 4: inv_freq of hidden / 4 frequencies, one per pair of each axis
    config = transformers.EfficientLoFTRConfig(hidden_size=d, num_attention_heads=8, out_features=[64, 64, 128, d],
                                               rope_parameters={"rope_type": "default", "rope_theta": expect.rope_theta,
                                                                "partial_rotary_factor": 4.0})
    rotary = modeling.EfficientLoFTRRotaryEmbedding(config)
    k, stride = config.q_aggregation_kernel_size, config.q_aggregation_stride

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        with torch.no_grad():
            feats = x.new_zeros((1, 1, (side - 1) * stride + k, (side - 1) * stride + k))
            cos, sin = rotary(feats)  # (1, side, side, d): every cell of the aggregated grid
            h, w = positions[:, 0].long(), positions[:, 1].long()
            q = x[None, :, None, :]  # (batch, n, 1, hidden), as the coarse attention views q
            return modeling.apply_rotary_pos_emb(q, q, cos[:, h, w], sin[:, h, w], unsqueeze_dim=2)[0][0, :, 0]

    return rope


efficientloftr.axes = ("per-axis",)


def sam3_vit(expect):
    """transformers' Sam3ViTRotaryEmbedding and apply_rotary_pos_emb_2d as SAM 3's ViT layers call them: a layer's
    patch coordinates from the layer's own ``Sam3ViTLayer.precompute_positions`` ((w, h) per patch, row by row, times
    window_size / grid width), read at each row's (w, h) and applied to q (1, 1, n, head_dim). It computes per-axis
    ladders [w | h] of theta^(-2k/(d/2)), interleaved pairs: a windowed layer over its window of max_position patches
    per side, unscaled (the sam3-vit preset); a global layer over the image's max_position patches per side scaled by
    window_size / max_position (sam3-vit-global: 24 / 72). Other expectations are declined."""
    torch = _torch()
    modeling = _modeling("sam3")
    from transformers import Sam3ViTConfig

    d, side, scale = expect.head_dim, expect.max_position, expect.axes_scale
    window = side if scale is None else round(scale[0] * side)
    if (expect.axes_kind() != "per-axis" or expect.axes_dims_rope != (d // 2, d // 2) or expect.convention != "interleaved"
            or expect.rotary_dim != d or expect.axes_offset is not None or d % 4 or window < 1
            or (scale is not None and not _same(((window / side,) * 2,), (scale,)))):
        raise NotImplementedError("transformers' SAM 3 ViT rotary computes per-axis ladders [w | h] of interleaved "
                                  "pairs over patch indices, unscaled in a window (the sam3-vit preset) or scaled by "
                                  "window_size / patches per side in a global layer (sam3-vit-global)")
    config = Sam3ViTConfig(hidden_size=d, num_attention_heads=1, num_hidden_layers=1, image_size=14 * side,
                           patch_size=14, window_size=window,
                           rope_parameters={"rope_type": "axial", "rope_theta": expect.rope_theta})
    rotary = modeling.Sam3ViTRotaryEmbedding(config)
    # a windowed layer's grid is its window; a global layer's (window_size 0 to precompute_positions) the image's
    grid = modeling.Sam3ViTLayer.precompute_positions(config, window if scale is None else 0)

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        with torch.no_grad():
            idx = (positions[:, 1] * side + positions[:, 0]).long().cpu()
            cos, sin = rotary(x, grid[idx].to(x.device))  # (1, n, d) in float32
            q = x[None, None]  # (batch, heads, n, head_dim), as the ViT's attention holds q
            return modeling.apply_rotary_pos_emb_2d(q, q, cos, sin)[0][0, 0]

    return rope


def _same(want, got) -> bool:
    """Whether stated (offsets, scales) are the ones a model computes, to float64's rounding of 4 pi/H."""
    return all(g is not None and all(abs(a - b) <= 1e-12 * max(1.0, abs(a)) for a, b in zip(w, g))
               for w, g in zip(want, got))


llama4_vision.axes = ("per-axis",)
sam3_vit.axes = ("per-axis",)
sam3_vit_global = sam3_vit  # SAM 3's global layers: the same code, checked under sam3-vit-global
#: every adapter: (the transformers module its code is from, the preset it is checked under)
CHECKED_UNDER: dict[str, tuple[str, str]] = {**{name: (m.module, m.preset) for name, m in MODELS.items()},
                                             "llama4_vision": ("llama4", "llama-4-vision"),
                                             "dinov3": ("dinov3_vit", "dinov3-vitl16"),
                                             "sapiens2": ("sapiens2", "dinov3-vitl16"),  # DINOv3's code, as its own
                                             "eomt_dinov3": ("eomt_dinov3", "dinov3-vitl16"),
                                             "efficientloftr": ("efficientloftr", "efficientloftr"),
                                             "sam3_vit": ("sam3", "sam3-vit"),
                                             "sam3_vit_global": ("sam3", "sam3-vit-global")}

qwen2_vl = factory("qwen2_vl")
qwen2_5_vl = factory("qwen2_5_vl")
qwen3_vl = factory("qwen3_vl")
qwen3_5 = factory("qwen3_5")
glm4v = factory("glm4v")
cosmos3_edge = factory("cosmos3_edge")
glm_image = factory("glm_image")
hy_v4_vl = factory("hy_v4_vl")
hunyuan_vl = factory("hunyuan_vl")
qwen2_vl_vision = factory("qwen2_vl_vision")
qwen3_5_vision = factory("qwen3_5_vision")
pixtral = factory("pixtral")
mlcd = factory("mlcd")
exaone4_5 = factory("exaone4_5")
glm5_next = factory("glm5_next")
lfm3_vl = factory("lfm3_vl")
video_llama_3 = factory("video_llama_3")
llava_onevision1_5 = factory("llava_onevision1_5")
ovis2_5 = factory("ovis2_5")
kimi_k25 = factory("kimi_k25")
inkling2 = factory("inkling2")
sam2_video = factory("sam2_video")
edgetam_video = factory("edgetam_video")
sam3_tracker_video = factory("sam3_tracker_video")
# the same rotary embeddings as table builders (--form table), as ropespec.implementations.adapters.hf_axes:<model>_table
qwen2_vl_table = table_factory("qwen2_vl")
qwen3_vl_table = table_factory("qwen3_vl")
glm4v_table = table_factory("glm4v")
pixtral_table = table_factory("pixtral")

