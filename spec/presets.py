"""Expectations of well-known models, by name (``--expect llama3.1-8b``).

Values from the models' Hugging Face configs (``config.json`` in each model's repository on the Hub, and
transformers' config classes for the same models). ``convention`` is the convention of the model's Hugging Face code: Meta's own
Llama code pairs interleaved, HF's permuted weights pair half. ``max_position`` is the model's
max_position_embeddings (how far ropespec tests by default). A value that could not be confirmed from
a primary source is listed in ``UNVERIFIED`` and said so by ``ropespec presets``.
"""

from __future__ import annotations

import math

from typing import Any

from ropespec.spec.expectation import Expect, ExpectationError

_PRESETS: dict[str, dict[str, Any]] = {
    "llama2-7b": {"head_dim": 128, "rope_theta": 10000.0, "max_position": 4096},
    "llama3.1-8b": {
        "head_dim": 128, "rope_theta": 500000.0, "max_position": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192},
    },
    "mistral-7b-v0.1": {"head_dim": 128, "rope_theta": 10000.0, "max_position": 32768},
    "qwen2.5-7b": {"head_dim": 128, "rope_theta": 1000000.0, "max_position": 32768},
    "qwen2.5-7b-yarn": {
        "head_dim": 128, "rope_theta": 1000000.0, "max_position": 131072,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    },
    "deepseek-v3": {
        "head_dim": 64, "rope_theta": 10000.0, "convention": "rope_interleave", "max_position": 163840,
        "rope_scaling": {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                         "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0},
    },
    "gpt-oss": {
        "head_dim": 64, "rope_theta": 150000.0, "max_position": 131072,
        "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
                         "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False},
    },
    "gpt-neox-20b": {"head_dim": 96, "partial_rotary_factor": 0.25, "rope_theta": 10000.0, "max_position": 2048},
    "pythia-6.9b": {"head_dim": 128, "partial_rotary_factor": 0.25, "rope_theta": 10000.0, "max_position": 2048},
    "gpt-j-6b": {"head_dim": 256, "rotary_dim": 64, "rope_theta": 10000.0, "convention": "interleaved",
                 "max_position": 2048},
    "codellama-7b": {"head_dim": 128, "rope_theta": 1000000.0, "max_position": 16384},
    "clvp": {"head_dim": 64, "rotary_dim": 32, "rope_theta": 10000.0, "max_position": 4096},
    "ministral-3": {"head_dim": 128, "rope_theta": 1000000.0, "max_position": 262144, "n_heads": 32, "n_kv_heads": 8,
                    "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 16384,
                                     "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0},
                    "query_temperature_beta": 0.1, "query_temperature_length": 16384, "yarn_softmax_mscale": False},
    # proportional RoPE over the whole head of the full-attention layers (Gemma 4's global layers)
    "gemma-4": {"head_dim": 512, "rope_theta": 1000000.0, "max_position": 131072,
                "rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}},
    # Llama 4 Scout's RoPE layers (its NoPE layers carry the query temperature and no RoPE: see NOTES)
    "llama-4-scout": {"head_dim": 128, "rope_theta": 500000.0, "convention": "interleaved", "max_position": 10485760,
                      "n_heads": 40, "n_kv_heads": 8,
                      "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}},
    # Llama 4 Scout's NoPE layers (one of every four): no RoPE, the queries times 1 + 0.1 ln(1 + floor((p + 1)/8192))
    "llama-4-scout-nope": {"head_dim": 128, "rope_theta": 500000.0, "max_position": 10485760, "n_heads": 40,
                           "n_kv_heads": 8, "attention_nope": True, "query_temperature_beta": 0.1,
                           "query_temperature_length": 8192, "query_temperature_offset": 1},
    # multi-axis RoPE: positions are (n, A) vectors, one column per axis in the order of the sections
    "qwen2-vl-7b": {"head_dim": 128, "rope_theta": 1000000.0, "mrope_section": [16, 24, 24], "max_position": 32768,
                    "video_time": "grid"},
    "qwen2.5-vl-7b": {"head_dim": 128, "rope_theta": 1000000.0, "mrope_section": [16, 24, 24], "max_position": 128000,
                      "video_time": "seconds", "tokens_per_second": 2},
    "qwen3-vl-8b": {"head_dim": 128, "rope_theta": 5000000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True,
                    "max_position": 262144, "video_time": "frames"},
    "qwen3.5": {"head_dim": 256, "partial_rotary_factor": 0.25, "rope_theta": 10000.0, "mrope_section": [11, 11, 10],
                "mrope_interleaved": True, "max_position": 32768},
    "cosmos3-edge": {"head_dim": 128, "rope_theta": 100000000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True,
                     "max_position": 131072},
    # the NTK-alpha base rope_theta alpha^(d/(d - 2)), alpha 1000, d 128, as HunYuan's code forms it
    "hunyuanocr": {"head_dim": 128, "rope_theta": 10000.0 * 1000.0 ** (128 / 126), "mrope_section": [16, 16, 16, 16],
                   "axis_names": ["p", "w", "h", "i"], "max_position": 32768},
    "glm-image": {"head_dim": 128, "partial_rotary_factor": 0.5, "rope_theta": 10000.0, "mrope_section": [8, 12, 12],
                  "max_position": 131072},
    "hy-v4-vl": {"head_dim": 64, "rope_theta": 10000.0, "convention": "rope_interleave", "mrope_section": [12, 10, 10],
                 "mrope_interleaved": True, "max_position": 262144},
    "glm-4.1v": {"head_dim": 128, "partial_rotary_factor": 0.5, "rope_theta": 10000.0, "convention": "interleaved",
                 "mrope_section": [8, 12, 12], "max_position": 65536, "video_time": "frames"},
    "qwen2-vl-vision": {"head_dim": 80, "rope_theta": 10000.0, "axes_dims_rope": [40, 40], "max_position": 8192},
    "qwen3.5-vision": {"head_dim": 72, "rope_theta": 10000.0, "axes_dims_rope": [36, 36], "axis_names": ["h", "w"],
                       "max_position": 8192},
    "exaone-4.5-vision": {"head_dim": 224, "rope_theta": 10000.0, "axes_dims_rope": [112, 112], "axis_names": ["h", "w"],
                          "max_position": 8192},
    "glm-5-next-vision": {"head_dim": 64, "rope_theta": 10000.0, "axes_dims_rope": [32, 32], "axis_names": ["h", "w"],
                          "max_position": 8192},
    "lfm3-vl-vision": {"head_dim": 64, "rope_theta": 1000000.0, "axes_dims_rope": [32, 32], "axis_names": ["h", "w"],
                       "max_position": 8192},
    "videollama3-vision": {"head_dim": 64, "rope_theta": 10000.0, "axes_dims_rope": [32, 32], "axis_names": ["h", "w"],
                           "max_position": 8192},
    "llava-onevision-1.5-vision": {"head_dim": 64, "rope_theta": 10000.0, "axes_dims_rope": [32, 32],
                                   "axis_names": ["h", "w"], "max_position": 8192},
    "ovis2.5-vision": {"head_dim": 72, "rope_theta": 10000.0, "axes_dims_rope": [36, 36], "axis_names": ["h", "w"],
                       "max_position": 8192},
    "kimi-k2.5-vision": {"head_dim": 72, "rope_theta": 10000.0, "axes_dims_rope": [36, 36], "axes_interleaved": True,
                         "axis_names": ["w", "h"], "max_position": 8192},
    "inkling2-vision": {"head_dim": 64, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [32, 32],
                        "axis_names": ["w", "h"], "axes_offset": [1, 1], "max_position": 8192},
    "sam2-video": {"head_dim": 256, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [128, 128],
                   "axis_names": ["w", "h"], "max_position": 64},
    "pixtral-12b": {"head_dim": 64, "rope_theta": 10000.0, "axes_parity": True, "max_position": 64},
    "mlcd-vit-bigg": {"head_dim": 104, "rope_theta": 10000.0, "axes_dims_rope": [52, 52], "axis_names": ["h", "w"],
                      "max_position": 24},
    "llama-4-vision": {"head_dim": 88, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [44, 44],
                       "axis_names": ["x", "y"], "axes_offset": [1, 1], "max_position": 24},
    "dinov3-vitl16": {"head_dim": 64, "rope_theta": 100.0, "axes_dims_rope": [32, 32], "axis_names": ["h", "w"],
                      "axes_offset": [-6.5, -6.5], "axes_scale": [4 * math.pi / 14, 4 * math.pi / 14], "max_position": 14},
    # LTX-Video's transformer: RoPE over its whole inner dim 2048 (32 heads x 64), 2048 mod 6 = 2 leading dims still,
    # ascending ladders dealt one pair of each axis per frequency, coordinates (i - base/2) pi / base of its base grid
    # 20 frames x 2048 x 2048
    "ltx-video": {"head_dim": 2048, "rotary_start": 2, "rope_theta": 10000.0, "convention": "interleaved",
                  "axes_dims_rope": [682, 682, 682], "axis_names": ["f", "h", "w"], "axes_ladder": "ascending",
                  "axes_interleaved": True, "axes_offset": [-10, -1024, -1024],
                  "axes_scale": [math.pi / 20, math.pi / 2048, math.pi / 2048], "max_position": 2048},
    # SAM 3's ViT: [w | h] over patch indices, a windowed layer's 24 x 24 window; a global layer's 72 x 72 grid scaled
    # by window_size / 72
    "sam3-vit": {"head_dim": 64, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [32, 32],
                 "axis_names": ["w", "h"], "max_position": 24},
    "sam3-vit-global": {"head_dim": 64, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [32, 32],
                        "axis_names": ["w", "h"], "axes_scale": [1 / 3, 1 / 3], "max_position": 72},
    # V-JEPA 2's ViT-L: three per-axis ladders [t | h | w] of 2 ((64 // 3) // 2) = 20 dims, the last 4 dims still
    "vjepa2-vitl": {"head_dim": 64, "rotary_dim": 60, "rope_theta": 10000.0, "convention": "interleaved",
                    "axes_dims_rope": [20, 20, 20],
                    "axis_names": ["t", "h", "w"], "max_position": 16},
    # EfficientLoFTR's coarse attention: RoPE over its whole hidden size 256 before the heads are split
    "efficientloftr": {"head_dim": 256, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [128, 128],
                       "axis_names": ["h", "w"], "axes_interleaved": True, "axes_offset": [1, 1], "max_position": 64},
    "flux.1-dev": {"head_dim": 128, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [16, 56, 56],
                   "max_position": 4096},
    "hunyuan-video": {"head_dim": 128, "rope_theta": 256.0, "convention": "interleaved", "axes_dims_rope": [16, 56, 56],
                      "max_position": 4096},
    "wan2.1": {"head_dim": 128, "rope_theta": 10000.0, "convention": "interleaved", "axes_dims_rope": [44, 42, 42],
               "max_position": 1024},
}

#: preset -> what could not be confirmed from a primary source (the model's own config or code)
UNVERIFIED: dict[str, str] = {
    "clvp": ("from transformers' ClvpEncoderConfig defaults (hidden_size 768 / 12 heads, projection_dim 768: "
             "max(768 // 24, 32) = 32 rotating dims); max_position: no limit of its own, 4096 is ropespec's"),
    "gemma-4": ("from transformers' Gemma4TextConfig defaults for its full-attention layers (global_head_dim 512, "
                "rope_theta 1e6, partial_rotary_factor 0.25); a checkpoint's config.json was not read here"),
    "llama-4-scout": ("rope_scaling llama3 16x (low 1, high 1, original 8192) and max_position_embeddings 10485760 as "
                      "public code quotes meta-llama/Llama-4-Scout-17B-16E's config.json; not read here"),
    "llama-4-scout-nope": ("attn_scale 0.1 and floor_scale 8192 as transformers' Llama4TextConfig defaults them, "
                           "heads and max_position as llama-4-scout's; a checkpoint's config.json was not read here"),
    "ltx-video": ("base grid 20 frames x 2048 x 2048 (diffusers' LTXVideoRotaryPosEmbed defaults) and inner dim 2048 "
                  "from diffusers' LTXVideoTransformer3DModel defaults; max_position 2048 is ropespec's"),
    "glm-4.1v": "partial_rotary_factor 0.5 and mrope_section [8, 12, 12] as transformers' Glm4vTextRotaryEmbedding "
                "defaults them; the checkpoint's config.json was not read here",
    "qwen3.5": "rope_theta and max_position as transformers' Qwen3_5TextConfig defaults them (mrope_section [11, 11, 10] "
               "as its rotary embedding defaults it); a checkpoint's config.json was not read here",
    "qwen2.5-vl-7b": "tokens_per_second 2 as the checkpoint's vision_config is quoted in public code (transformers' "
                     "Qwen2_5_VLVisionConfig defaults to 4); the checkpoint's config.json was not read here",
    "qwen2-vl-vision": "max_position: the vision tower has no limit of its own; 8192 patches per side is ropespec's",
    "qwen3.5-vision": ("head_dim 72 = hidden_size 1152 / 16 heads, from transformers' Qwen3_5VisionConfig defaults (a "
                       "checkpoint's config.json was not read here); max_position: no limit of its own, 8192 is ropespec's"),
    "flux.1-dev": "max_position: FLUX has no limit of its own (the ids are patch rows and columns); 4096 is ropespec's",
    "hunyuan-video": "max_position: no limit of its own; 4096 is ropespec's",
    "cosmos3-edge": "from transformers' Cosmos3EdgeTextConfig defaults (a checkpoint's config.json was not read here)",
    "glm-image": ("from transformers' GlmImageTextConfig defaults, whose own rope_parameters lack partial_rotary_factor "
                  "and mrope_section (its code's fallback [8, 12, 12] over half the head, as GLM-4V MoE's)"),
    "hunyuanocr": ("rope_theta 10000 with rope_type xdrope (dynamic), alpha 1000 and xdrope_section [16, 16, 16, 16] "
                   "as public code states HunyuanOCR's (its transformers config class defaults none of them); the "
                   "checkpoint's config.json was not read here; max_position 32768 is ropespec's"),
    "hy-v4-vl": ("head_dim 64 is qk_rope_head_dim (MLA: the rope slice of q, k shared across heads), from transformers' "
                 "HYV4VLTextConfig defaults; rope_interleave as transformers 5.25's code applies it (interleaved pairs "
                 "written in the half layout; 5.24's wrote them in place: the same attention scores)"),
    "sam2-video": ("SAM 2 video's memory attention (EdgeTAM video's and SAM 3 tracker video's alike): head_dim 256 = "
                   "memory_attention_hidden_size / (downsample rate 1 x 1 head), max_position 64 = "
                   "memory_attention_rope_feat_sizes (SAM 3 tracker's are 72), from transformers' Sam2VideoConfig "
                   "defaults"),
    "exaone-4.5-vision": ("head_dim 224 = hidden_size 3584 / 16 heads, from transformers' Exaone4_5_VisionConfig "
                          "defaults; max_position: no limit of its own, 8192 is ropespec's"),
    "glm-5-next-vision": ("head_dim 64 = hidden_size 1024 / 16 heads, from transformers' Glm5NextVisionConfig defaults; "
                          "max_position: no limit of its own, 8192 is ropespec's"),
    "lfm3-vl-vision": ("head_dim 64 = hidden_size 1024 / 16 heads, rope_theta 1e6, from transformers' Lfm3VlVisionConfig "
                       "defaults; max_position: no limit of its own, 8192 is ropespec's"),
    "videollama3-vision": ("head_dim 64 = hidden_size 768 / 12 heads, from transformers' VideoLlama3VisionConfig "
                           "defaults; max_position: no limit of its own, 8192 is ropespec's"),
    "llava-onevision-1.5-vision": ("head_dim 64 = hidden_size 1024 / 16 heads, from transformers' "
                                   "LlavaOnevision15VisionConfig defaults; max_position: no limit of its own, 8192 is "
                                   "ropespec's"),
    "ovis2.5-vision": ("head_dim 72 = hidden_size 1152 / 16 heads, from transformers' Ovis2_5VisionConfig defaults; "
                       "max_position: no limit of its own, 8192 is ropespec's"),
    "kimi-k2.5-vision": ("head_dim 72 = hidden_size 1152 / 16 heads, from transformers' Kimi_K25VisionConfig defaults; "
                         "its temporal axis is an additive table, not RoPE; max_position 8192 is ropespec's"),
    "inkling2-vision": ("head_dim 64 = hidden_size 1024 / 16 heads, from transformers' Inkling2VisionConfig defaults; "
                        "max_position 8192 is ropespec's"),
    "pixtral-12b": "max_position 64: image_size 1024 / patch_size 16 patches per side, from transformers' "
                   "PixtralVisionConfig defaults",
    "mlcd-vit-bigg": "max_position 24: image_size 336 / patch_size 14 patches per side; head_dim 104 = hidden_size 1664 / 16 "
                     "heads; from transformers' MLCDVisionConfig defaults (a checkpoint's config.json was not read here)",
    "dinov3-vitl16": ("max_position 14: image_size 224 / patch_size 16 patches per side (a square grid: DINOv3 "
                      "normalises each axis by its own size, so another grid is another expectation: offset 0.5 - H/2, "
                      "scale 4 pi/H); head_dim 64 = hidden_size 1024 / 16 heads, rope_theta 100 (pos_embed_rope_base), "
                      "from transformers' DINOv3ViTConfig and the ViT-L/16 checkpoint's sizes"),
    "ministral-3": ("from transformers' Ministral3Config defaults (a checkpoint's config.json was not read here): YaRN 16x "
                    "over 16384, and the queries times 1 + 0.1 ln(1 + floor(p / 16384)) after RoPE "
                    "(llama_4_scaling_beta; the attention family's keys, read by --family attention)"),
    "deepseek-v3": "head_dim 64 is qk_rope_head_dim; DeepSeek applies mscale to the softmax scale, not in RoPE",
}

#: preset -> note shown by ``ropespec presets``
NOTES: dict[str, str] = {
    "efficientloftr": ("EfficientLoFTR's coarse attention (transformers' EfficientLoFTRConfig defaults: hidden_size 256, "
                       "rope_theta 10000): one ladder theta^(-2k/128) per axis, pair 2k on the row i and 2k + 1 on the "
                       "column j of the aggregated grid, both counted from 1 (axes_offset [1, 1]), interleaved pairs "
                       "over the whole hidden size; max_position 64 cells per side is ropespec's"),
    "vjepa2-vitl": ("what V-JEPA 2's code means to compute (head_dim 64 = hidden_size 1024 / 16 heads, grid 256 / 16 = "
                    "16 patches per side, transformers' VJEPA2Config defaults): [t | h | w] ladders theta^(-2k/20) of "
                    "interleaved pairs, dims 60..63 still; its code turns no pair by one angle (docs/findings.md, \""
                    "V-JEPA 2\")"),
    "sam3-vit": ("SAM 3's ViT (windowed layers): [w | h] ladders theta^(-2k/32) of interleaved pairs over a 24-patch "
                 "window (head_dim 64 = hidden_size 1024 / 16 heads, transformers' Sam3ViTConfig defaults)"),
    "sam3-vit-global": ("SAM 3's ViT global layers (7, 15, 23, 31): as sam3-vit over the whole 72-patch grid "
                        "(image_size 1008 / patch_size 14), each coordinate scaled by window_size / 72 = 1/3"),
    "gemma-4": ("proportional RoPE (p-RoPE): pairs (i, i + 256) over the whole 512-dim head, the first 64 turning by "
                "theta^(-2i/512), the other 192 still (frequency 0)"),
    "llama-4-scout": ("its RoPE layers (three of every four): interleaved pairs (complex freqs_cis), llama3 scaling; "
                      "its NoPE layers turn nothing and scale q by 1 + 0.1 ln(1 + floor((p + 1)/8192)) "
                      "(attn_temperature_tuning): preset llama-4-scout-nope, for --family attention"),
    "llama-4-scout-nope": ("its NoPE layers (no_rope_layers 0, every fourth): q and k not turned, the queries times "
                           "1 + 0.1 ln(1 + floor((p + 1)/8192)) (attn_temperature_tuning, attn_scale 0.1, floor_scale "
                           "8192); for --family attention (its RoPE layers: preset llama-4-scout)"),
    "ltx-video": ("dims 2..2047 turn: per frequency one pair each of f, h, w, each axis the ascending ladder "
                  "theta^(k/340), k < 341; coordinate (i - base/2) pi/base of the base grid 20 x 2048 x 2048"),
    "llama2-7b": "Meta's reference code pairs interleaved; HF's converted weights pair half",
    "deepseek-v3": ("transformers' code (rope_interleave) reads interleaved pairs and writes them in the half layout; "
                    "DeepSeek's own inference/model.py rotates interleaved pairs in place: check it with convention "
                    "'interleaved'"),
    "gpt-j-6b": "rotate_every_two: interleaved pairs on the first 64 dims",
    "clvp": "CLVP's text and speech encoders: the first 32 of 64 dims turn, half pairs; its attention turns v too",
    "gpt-neox-20b": "rotary_pct 0.25: 24 of 96 dims rotate",
    "pythia-6.9b": "rotary_pct 0.25: 32 of 128 dims rotate",
    "qwen2-vl-7b": "M-RoPE: t, h, w sections of 16, 24, 24 pairs of one shared ladder (half); text tokens have t = h = w",
    "qwen2.5-vl-7b": "as qwen2-vl-7b; video t ids are scaled by second_per_grid_t x tokens_per_second",
    "qwen3-vl-8b": "interleaved M-RoPE: pair j on h when j mod 3 = 1 and j < 60, on w when j mod 3 = 2 and j < 60, else t",
    "qwen3.5": ("interleaved M-RoPE on the first 64 of 256 dims (partial 0.25): pair j on h when j mod 3 = 1 and j < 33, "
                "on w when j mod 3 = 2 and j < 30, else t"),
    "glm-4.1v": "M-RoPE on the first 64 of 128 dims, interleaved pairs (rotate_half_llm)",
    "hunyuanocr": ("HunyuanOCR's XD-RoPE: four axes (p, w, h, image) of 16 pairs each of one ladder at the NTK-alpha "
                   "base 1e4 x 1000^(128/126), chunked, half pairing"),
    "qwen2-vl-vision": "the vision tower: [h | w] halves of 20 pairs each, each axis's ladder theta^(-2k/40), half "
                       "pairing over the whole head (embed_dim 1280, 16 heads)",
    "qwen3.5-vision": ("Qwen3.5's vision tower (rope_type axial): [h | w] halves of 18 pairs each, each axis's ladder "
                       "theta^(-2k/36), half pairing over the whole head"),
    "kimi-k2.5-vision": ("Qwen2-VL's vision rotary with its table recomposed [w0, h0, w1, h1, ...]: each axis its own "
                         "ladder theta^(-2k/36), one pair of each per frequency (axes_interleaved), w first; half pairing"),
    "inkling2-vision": ("[w | h] ladders theta^(-2k/32) of interleaved pairs over patches counted from 1 (axes_offset "
                        "[1, 1]; its class token at (0, 0) is no grid position and is not checked)"),
    "pixtral-12b": "one ladder theta^(-2j/64): h takes the even frequency indices, w the odd, chunked [h | w]",
    "mlcd-vit-bigg": ("MLCD's 2-D axial RoPE: [h | w] halves of 26 pairs each, each axis's ladder theta^(-2k/52) "
                      "(computed over head_dim // 2), half pairing over the whole head"),
    "llama-4-vision": ("[x | y]: x is the patch column, y the row (0 to 23 on its 24-patch grid), each 22 complex pairs "
                       "with the ladder theta^(-2k/44); Llama 4 turns a patch by its index plus 1 (axes_offset [1, 1]); "
                       "its class token, at angle 0, is no grid position and is not checked"),
    "dinov3-vitl16": ("[h | w]: patch centres normalised to [-1, 1], ((i + 0.5)/14) 2 - 1, each axis its own ladder of "
                      "periods 100^(2k/32), angles 2 pi coordinate / period: the coordinate (i - 6.5) x 4 pi/14 turns "
                      "theta^(-2k/32); half pairing over the whole head; the prefix tokens (class, registers) are not "
                      "turned and not checked"),
    "flux.1-dev": "axes_dims_rope [16, 56, 56]: ids (index, row, column), each axis its own ladder, interleaved pairs",
    "hunyuan-video": "axes (t, h, w) of 16, 56, 56 dims, theta 256",
    "wan2.1": "axes (t, h, w): h = w = 2 (128 // 6) = 42 dims, t the other 44; rope_max_seq_len 1024",
}


def names() -> list[str]:
    return list(_PRESETS)


def rotary() -> list[str]:
    """The presets of a layer that turns q and k: every one but a NoPE layer's (``attention_nope``: Llama 4's
    no_rope_layers), which states no RoPE to record as golden data, to match a fingerprint to, or to check outside the
    attention family."""
    return [n for n, d in _PRESETS.items() if not d.get("attention_nope")]


def position_rules() -> list[str]:
    """The presets that name a position-id builder's rules (``video_time``): the vision-language models."""
    return [n for n, d in _PRESETS.items() if "video_time" in d]


def get(name: str) -> Expect:
    """The expectation of preset ``name``; ExpectationError naming the known ones otherwise."""
    if name not in _PRESETS:
        raise ExpectationError("expect", f"unknown preset {name!r} (known: {', '.join(_PRESETS)})")
    return Expect.from_dict(_PRESETS[name])
