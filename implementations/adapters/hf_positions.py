"""transformers' multimodal position-id builders as factories: the model class's own ``compute_3d_position_ids`` and
``get_rope_index`` (with its ``get_vision_position_ids``), run as they are on an instance that holds only the model's
config (no weights, no vision tower), fed what the model's processor feeds them.

    ropespec check ropespec.implementations.adapters.hf_positions:qwen2_5_vl --family position-ids --expect qwen2.5-vl-7b

Factories: ``qwen2_vl``, ``qwen2_5_vl``, ``qwen3_vl``, ``glm4v`` and ``qwen2_5_omni`` (Qwen2.5-Omni's thinker), each a
batched builder (``position_ids(rows)``, see :mod:`ropespec.implementations.families.positions`). A row's segments
become what the processor makes of a prompt: token ids (text, the config's image and video token ids, left padding;
the text token right before a vision block is the processor's ``<|vision_start|>``, which transformers 4 and the Omni
thinker find the blocks by, and the one right after it ``<|vision_end|>``), ``mm_token_type_ids`` (0 text, 1 image,
2 video) where ``get_rope_index`` takes them, the patch grids before merging (the merged grid times
``spatial_merge_size`` on h and w, as ``image_grid_thw`` and ``video_grid_thw`` hold them), the seconds per temporal
step (``second_per_grid_ts``, the Omni thinker's ``second_per_grids``) and the attention mask. The Omni thinker's
``get_rope_index`` steps over one token before and one after every block whatever they are (its ``<|vision_bos|>`` and
``<|vision_eos|>``), so it declines an expectation whose ``vision_framing`` promises less; its clock is the config's
``position_id_per_seconds``: ``--expect`` its thinker's config.json (``thinker_config``), which reads as its rules and
framing. The prefill positions are
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

from ropespec.spec.positions import FRAMING

ARRAY = "numpy"
TEXT_TOKEN = 100  # any id that is none of the model's special tokens


@dataclass(frozen=True)
class Model:
    module: str  # transformers.models.<module>.modeling_<module>
    model: str  # the class whose methods build the position ids
    config: str  # its config class
    video_time: str  # the rule its code follows (ropespec.spec.positions.TIME_RULES)
    seconds: str | None = None  # the keyword get_rope_index takes the seconds per temporal step by
    clock: tuple[str, ...] = ("vision_config", "tokens_per_second")  # where its config keeps tokens_per_second
    framing: tuple[int, int] = FRAMING  # the least text its code needs around every vision block (before, after)
    tokens: tuple[tuple[str, int], ...] = ()  # token ids its code reads that its config class does not name


MODELS = {
    "qwen2_vl": Model("qwen2_vl", "Qwen2VLModel", "Qwen2VLConfig", "grid"),
    "qwen2_5_vl": Model("qwen2_5_vl", "Qwen2_5_VLModel", "Qwen2_5_VLConfig", "seconds", seconds="second_per_grid_ts"),
    "qwen3_vl": Model("qwen3_vl", "Qwen3VLModel", "Qwen3VLConfig", "frames"),
    "glm4v": Model("glm4v", "Glm4vModel", "Glm4vConfig", "frames"),
    # <|vision_bos|> and <|vision_eos|> are the tokenizer's 151652 and 151653 (the ids its talker's config class
    # defaults vision_start_token_id and vision_end_token_id to; the thinker's names neither)
    "qwen2_5_omni": Model("qwen2_5_omni", "Qwen2_5OmniThinkerModel", "Qwen2_5OmniThinkerConfig", "seconds",
                          seconds="second_per_grids", clock=("position_id_per_seconds",), framing=(1, 1),
                          tokens=(("vision_start_token_id", 151652), ("vision_end_token_id", 151653))),
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
    for key, token in m.tokens:
        if getattr(config, key, None) is None:
            setattr(config, key, token)
    if m.seconds:
        tps = expect.params("position-ids").tokens_per_second
        if tps != int(tps):
            raise NotImplementedError(f"transformers' {m.config} takes an integer {m.clock[-1]}, not {tps:g}")
        holder = config
        for step in m.clock[:-1]:
            holder = getattr(holder, step)
        setattr(holder, m.clock[-1], int(tps))
    cls = getattr(mod, m.model)
    model = cls.__new__(cls)
    torch.nn.Module.__init__(model)
    model.config = config
    model.rope_deltas = None
    model.spatial_merge_size = config.vision_config.spatial_merge_size  # the Omni thinker's, set by its __init__
    return model, torch


def _inputs(rows, config, torch):
    """Token ids, token types, attention mask, grids and seconds of left-padded rows, as the processor makes them."""
    merge = config.vision_config.spatial_merge_size
    ids, types, mask, images, videos, seconds = [], [], [], [], [], []
    for row in rows:
        i, t, a, closes = [], [], [], []
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
            if getattr(config, "vision_end_token_id", None) is not None:
                closes.append(len(i) + n)  # its <|vision_end|>: the text token right after the block, if text
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
        for k in closes:
            if k < len(i) and i[k] == TEXT_TOKEN:  # a lone token between two blocks stays the next one's start
                i[k] = config.vision_end_token_id
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
        rules = expect.params("position-ids")
        if rules.video_time != m.video_time:
            raise NotImplementedError(f"transformers' {name} builds positions by the {m.video_time!r} rule, not "
                                      f"{rules.video_time!r}")
        if any(have < need for have, need in zip(rules.vision_framing, m.framing)):
            raise NotImplementedError(f"transformers' {name} reads {m.framing[0]} token before and {m.framing[1]} "
                                      f"after every vision block as its framing: it needs vision_framing of at "
                                      f"least {list(m.framing)}, not {list(rules.vision_framing)}")
        model, torch = _instance(m, expect)
        if name == "glm4v" and not _takes(model.get_rope_index, "mm_token_type_ids"):
            raise NotImplementedError("transformers 4's GLM-4.1V wraps each video frame in video_start/video_end "
                                      "markers, which these segments do not say")

        def position_ids(rows):
            ids, types, mask, images, videos, seconds = _inputs(rows, model.config, torch)
            b, n = ids.shape
            extra = {m.seconds: seconds} if m.seconds else {}
            if _takes(model.get_rope_index, "mm_token_type_ids"):  # transformers 5: the processor's token types
                extra["mm_token_type_ids"] = types
            pos, model.rope_deltas = model.get_rope_index(ids, image_grid_thw=images, video_grid_thw=videos,
                                                          attention_mask=mask, **extra)
            if not hasattr(model, "compute_3d_position_ids"):  # transformers 4: decoding is inline in forward
                return pos.permute(1, 2, 0).numpy()
            step = torch.cat([mask, torch.ones(b, 1, dtype=mask.dtype)], dim=1)
            untyped = {"mm_token_type_ids": None} if _takes(model.compute_3d_position_ids, "mm_token_type_ids") else {}
            nxt = model.compute_3d_position_ids(input_ids=torch.full((b, 1), TEXT_TOKEN), inputs_embeds=torch.zeros(b, 1, 1),
                                                image_grid_thw=None, video_grid_thw=None, attention_mask=step,
                                                **untyped, **{_cache_arg(model): _Cache(n)})[..., -1:]
            return pos.permute(1, 2, 0).numpy(), nxt[..., 0].permute(1, 0).numpy()

        position_ids.batched = True
        return position_ids

    make.__name__ = make.__qualname__ = name
    return make


qwen2_vl = _factory("qwen2_vl")
qwen2_5_vl = _factory("qwen2_5_vl")
qwen3_vl = _factory("qwen3_vl")
glm4v = _factory("glm4v")
qwen2_5_omni = _factory("qwen2_5_omni")
