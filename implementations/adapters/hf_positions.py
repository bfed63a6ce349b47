"""transformers' multimodal position-id builders as factories: the model class's own ``compute_3d_position_ids`` and
``get_rope_index`` (with its ``get_vision_position_ids``), run as they are on an instance that holds only the model's
config (no weights, no vision tower), fed what the model's processor feeds them.

    ropespec check ropespec.implementations.adapters.hf_positions:qwen2_5_vl --family position-ids --expect qwen2.5-vl-7b

Factories: ``qwen2_vl``, ``qwen2_5_vl``, ``qwen3_vl``, ``glm4v``, each a batched builder (``position_ids(rows)``, see
:mod:`ropespec.implementations.families.positions`). A row's segments become what the processor makes of a prompt: token ids
(text, the config's image and video token ids, left padding; the text token right before a vision block is the
processor's ``<|vision_start|>``, which transformers 4 finds the blocks by), ``mm_token_type_ids`` (0 text, 1 image,
2 video), the patch grids before merging (the merged grid times ``spatial_merge_size`` on h and w, as ``image_grid_thw`` and
``video_grid_thw`` hold them), ``second_per_grid_ts`` and the attention mask. The prefill positions are
``get_rope_index`` (what ``compute_3d_position_ids`` calls for a prompt with images or videos; text-only rows too, which
its code handles); the next position is ``compute_3d_position_ids`` for one new token with a cache of the prompt's
length, through the ``rope_deltas`` the prefill kept, as the model's forward calls it while decoding.
Needs ``transformers`` (``pip install -e '.[hf]'``); without it they decline. transformers 4 (no token types, no
``compute_3d_position_ids``: decoding is inline in the model's forward) is fed without token types and gives no next
position (the decode property is then not checked); its GLM-4.1V is declined; 5.x before 5.24 names the cache
``past_key_values``.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

ARRAY = "numpy"
TEXT_TOKEN = 100  # any id that is none of the model's special tokens


@dataclass(frozen=True)
class Model:
    module: str  # transformers.models.<module>.modeling_<module>
    model: str  # the class whose methods build the position ids
    config: str  # its config class
    video_time: str  # the rule its code follows (ropespec.spec.positions.TIME_RULES)
    seconds: bool = False  # whether get_rope_index takes second_per_grid_ts


MODELS = {
    "qwen2_vl": Model("qwen2_vl", "Qwen2VLModel", "Qwen2VLConfig", "grid"),
    "qwen2_5_vl": Model("qwen2_5_vl", "Qwen2_5_VLModel", "Qwen2_5_VLConfig", "seconds", seconds=True),
    "qwen3_vl": Model("qwen3_vl", "Qwen3VLModel", "Qwen3VLConfig", "frames"),
    "glm4v": Model("glm4v", "Glm4vModel", "Glm4vConfig", "frames"),
}


class _Cache:
    """What compute_3d_position_ids asks of a cache: its length."""

    def __init__(self, n: int):
        self.n = n

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.n


def _instance(m: Model, expect):
    """The model class with its config and nothing else: its position methods read only ``self.config`` and
    ``self.rope_deltas``."""
    try:
        import torch
        mod = importlib.import_module(f"transformers.models.{m.module}.modeling_{m.module}")
        cfg_mod = importlib.import_module(f"transformers.models.{m.module}.configuration_{m.module}")
    except ImportError as e:
        raise NotImplementedError(f"needs transformers and torch (pip install -e '.[hf]'): {e}") from None
    config = getattr(cfg_mod, m.config)()
    if m.seconds:
        tps = expect.params("position-ids").tokens_per_second
        if tps != int(tps):
            raise NotImplementedError(f"transformers' {m.config} takes an integer tokens_per_second, not {tps:g}")
        config.vision_config.tokens_per_second = int(tps)
    cls = getattr(mod, m.model)
    model = cls.__new__(cls)
    torch.nn.Module.__init__(model)
    model.config = config
    model.rope_deltas = None
    return model, torch


def _inputs(rows, config, torch):
    """Token ids, token types, attention mask, grids and seconds of left-padded rows, as the processor makes them."""
    merge = config.vision_config.spatial_merge_size
    ids, types, mask, images, videos, seconds = [], [], [], [], [], []
    for row in rows:
        i, t, a = [], [], []
        for seg in row:
            kind = seg[0]
            if kind in ("text", "pad"):
                n = seg[1]
                i += [0 if kind == "pad" else TEXT_TOKEN] * n
                t += [0] * n
                a += [0 if kind == "pad" else 1] * n
                continue
            tt, h, w = seg[1]
            n = tt * h * w
            grid = [tt, h * merge, w * merge]
            if i and t[-1] == 0 and getattr(config, "vision_start_token_id", None) is not None:
                i[-1] = config.vision_start_token_id  # the processor's <|vision_start|>: text, right before the block
            if kind == "image":
                i += [config.image_token_id] * n
                t += [1] * n
                images.append(grid)
            else:
                i += [config.video_token_id] * n
                t += [2] * n
                videos.append(grid)
                seconds.append(seg[2])
            a += [1] * n
        ids.append(i)
        types.append(t)
        mask.append(a)
    long = torch.long
    return (torch.tensor(ids, dtype=long), torch.tensor(types, dtype=torch.int32), torch.tensor(mask, dtype=long),
            torch.tensor(images, dtype=long) if images else None, torch.tensor(videos, dtype=long) if videos else None,
            torch.tensor(seconds, dtype=torch.float32) if seconds else None)


def _takes(fn, name: str) -> bool:
    return name in inspect.signature(fn).parameters


def _cache_arg(model) -> str:
    """The cache's keyword: ``cache`` in transformers 5.24, ``past_key_values`` before."""
    return "cache" if _takes(model.compute_3d_position_ids, "cache") else "past_key_values"


def _factory(name: str):
    m = MODELS[name]

    def make(expect):
        if expect.params("position-ids").video_time != m.video_time:
            raise NotImplementedError(f"transformers' {name} builds positions by the {m.video_time!r} rule, not "
                                      f"{expect.params('position-ids').video_time!r}")
        model, torch = _instance(m, expect)
        if name == "glm4v" and not _takes(model.get_rope_index, "mm_token_type_ids"):
            raise NotImplementedError("transformers 4's GLM-4.1V wraps each video frame in video_start/video_end "
                                      "markers, which these segments do not say")

        def position_ids(rows):
            ids, types, mask, images, videos, seconds = _inputs(rows, model.config, torch)
            b, n = ids.shape
            extra = {"second_per_grid_ts": seconds} if m.seconds else {}
            if _takes(model.get_rope_index, "mm_token_type_ids"):  # transformers 5: the processor's token types
                extra["mm_token_type_ids"] = types
            pos, model.rope_deltas = model.get_rope_index(ids, image_grid_thw=images, video_grid_thw=videos,
                                                          attention_mask=mask, **extra)
            if not hasattr(model, "compute_3d_position_ids"):  # transformers 4: decoding is inline in forward
                return pos.permute(1, 2, 0).numpy()
            step = torch.cat([mask, torch.ones(b, 1, dtype=mask.dtype)], dim=1)
            nxt = model.compute_3d_position_ids(input_ids=torch.full((b, 1), TEXT_TOKEN), inputs_embeds=torch.zeros(b, 1, 1),
                                                image_grid_thw=None, video_grid_thw=None, attention_mask=step,
                                                mm_token_type_ids=None, **{_cache_arg(model): _Cache(n)})[..., -1:]
            return pos.permute(1, 2, 0).numpy(), nxt[..., 0].permute(1, 0).numpy()

        position_ids.batched = True
        return position_ids

    make.__name__ = make.__qualname__ = name
    return make


qwen2_vl = _factory("qwen2_vl")
qwen2_5_vl = _factory("qwen2_5_vl")
qwen3_vl = _factory("qwen3_vl")
glm4v = _factory("glm4v")
