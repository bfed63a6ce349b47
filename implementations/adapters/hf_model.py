"""transformers' causal LMs as whole-model targets (the model family): a tiny model of a model type, built on the CPU
from its own config class with random weights, in float64, its RoPE the expectation's (base, scaling, partial rotary,
M-RoPE sections: transformers' rope_parameters, as :func:`ropespec.implementations.adapters.hf.rope_parameters` writes
them) and only its sizes shrunk:

    ropespec check ropespec.implementations.adapters.hf_model:llama --family model --expect llama3.1-8b
    ropespec check ropespec.implementations.adapters.hf_model:qwen2_vl --family model --expect qwen2-vl-7b
    ropespec check ropespec.implementations.adapters.hf_model:phi3 --family model --expect phi-3-mini-128k/config.json

A model's config.json is a TARGET of its own (``ropespec check path/config.json --family model``, :func:`config_file`): a
tiny model of the config's own class, every field of the config kept but its sizes (one layer of each layer type, its
sliding window and RoPE as written), its expectation the config's RoPE and its dtype float64 unless they are given.

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
import dataclasses
import json
from pathlib import Path

from ropespec.implementations.adapters.hf import rope_parameters
from ropespec.implementations.families.model import cache_keyword, cache_of
from ropespec.spec import tolerance
from ropespec.spec.hfconfig import from_hf_config

ARRAY = "torch"
#: the tiny sizes: layers and the vocabulary (heads: tiny_heads), the MLP's width per hidden unit
TINY = dict(num_hidden_layers=2, vocab_size=128)
MLP_RATIO = 2


def tiny_heads(head_dim: int) -> tuple[int, int]:
    """(query heads, key/value heads) of a tiny model: grouped two to one, four query heads up to head_dim 128 and
    two above (a head of 256 keeps the model's width, heads x head_dim, at 512: a whole battery within 2 GB)."""
    heads = 4 if head_dim <= 128 else 2
    return heads, heads // 2
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


def _rope_fields(expect) -> dict:
    """A text config's fields that say the expectation's RoPE: rope_parameters (M-RoPE sections included) and
    max_position_embeddings, and original_max_position_embeddings at the top level too (Phi-3 reads it there)."""
    params, max_pos = rope_parameters(expect)
    if expect.mrope_section is not None:
        params["mrope_section"] = list(expect.mrope_section)
    fields = dict(rope_parameters=params, max_position_embeddings=max_pos)
    if "original_max_position_embeddings" in params:
        fields["original_max_position_embeddings"] = params["original_max_position_embeddings"]
    return fields


def _config(model_type: str, expect):
    """The tiny config: the model type's class, the tiny sizes, the expectation's RoPE."""
    config_cls, _ = _classes(model_type)
    heads, kv_heads = tiny_heads(expect.head_dim)
    hidden = heads * expect.head_dim
    text = dict(TINY, num_attention_heads=heads, num_key_value_heads=kv_heads, hidden_size=hidden,
                head_dim=expect.head_dim, intermediate_size=MLP_RATIO * hidden, pad_token_id=0, bos_token_id=1,
                eos_token_id=2, **_rope_fields(expect))
    if model_type in CLASSES:  # a vision-language model: its text config, and a vision tower it does not use
        config = config_cls(text_config=text, vision_config=dict(depth=1, embed_dim=32, hidden_size=hidden,
                                                                 num_heads=2, patch_size=2, spatial_merge_size=1,
                                                                 temporal_patch_size=1, in_channels=3),
                            image_token_id=120, video_token_id=121, vision_start_token_id=122,
                            vision_end_token_id=123)
    else:
        config = config_cls(**text)
    _implementations(config)
    return config


def _sharpen(model, factor: float = SHARPEN) -> None:
    import torch

    with torch.no_grad():
        for name, module in model.named_modules():
            if name.endswith(("q_proj", "k_proj")):
                for p in ([module.weight] if hasattr(module, "weight") else module.parameters()):  # a layer of layers
                    p.mul_(factor)
            elif name.endswith("qkv_proj"):  # q, k and v fused (Phi-3): the q and k rows only
                config = model.config.get_text_config()
                rows = (config.num_attention_heads + config.num_key_value_heads) * config.head_dim
                module.weight[:rows].mul_(factor)


def factory(model_type: str):
    """make(expect): a tiny ``model_type`` causal LM of the expectation's RoPE, float64, seed 0."""

    def make(expect):
        try:
            import torch  # noqa: F401  (the model's arrays: a missing torch is said here)

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
            name = f"transformers' {model_type}"
            try:
                config = _config(model_type, expect)
            except Exception as e:  # noqa: BLE001  (said, never a verdict)
                raise NotImplementedError(f"{name}: its tiny config could not be made ({type(e).__name__}: "
                                          f"{str(e)[:200]})") from None
            _BUILT.clear()
            _BUILT[key] = _construct(_classes(model_type)[1], config, name, model_type)
        return copy.deepcopy(_BUILT[key])

    make.__name__ = make.__qualname__ = model_type
    make.__doc__ = f"transformers' {model_type}, tiny, of the expectation's RoPE."
    return make


#: a config's sizes, each made tiny (the text model's, or a multimodal model's text_config): hidden_size is heads x
#: head_dim and the MLP twice it; experts and MLA's low-rank sizes shrink alike. Everything else the config says is
#: kept: its RoPE fields, sliding_window, layer_types (one layer of each type), the attention's own flags
TINY_SIZES = dict(vocab_size=128, num_local_experts=4,
                  n_routed_experts=4, num_experts=4, num_experts_per_tok=2, n_shared_experts=1, n_group=1, topk_group=1,
                  first_k_dense_replace=1, kv_lora_rank=32, q_lora_rank=None, qk_nope_head_dim=16, v_head_dim=16)
#: MLA's query rank where the config has one (its q_lora_rank None: full-rank queries, kept so)
TINY_Q_LORA = 32
#: what a tiny model built here never takes from a config: how its checkpoint was stored and its hub code
NOT_KEPT = ("quantization_config", "torch_dtype", "dtype", "auto_map", "_name_or_path", "transformers_version",
            "architectures", "attn_implementation", "_attn_implementation")
#: a multimodal config's vision tower, tiny: built (its model class builds one) and never used (the text path)
TINY_VISION = dict(depth=1, num_hidden_layers=1, embed_dim=32, hidden_size=32, num_heads=2, num_attention_heads=2,
                   intermediate_size=64, patch_size=2, image_size=32, spatial_merge_size=1, temporal_patch_size=1,
                   in_channels=3)


def _tiny_text(d: dict, expect) -> dict:
    """A text config's fields with its sizes made tiny (TINY_SIZES), one layer of each of its layer types."""
    out = {k: v for k, v in d.items() if k not in NOT_KEPT}
    heads, kv_heads = tiny_heads(expect.head_dim)
    hidden = heads * expect.head_dim
    out.update({k: v for k, v in TINY_SIZES.items() if k in d or k == "vocab_size"})
    if isinstance(d.get("num_experts_per_tok"), int):  # a router of one expert a token stays so (ZAYA's requires it)
        out["num_experts_per_tok"] = min(d["num_experts_per_tok"], TINY_SIZES["num_experts_per_tok"])
    for key in d:  # every other vocabulary's table (Gemma 3n's and 4's per-layer inputs) as small as the tokens'
        if key.startswith("vocab_size_") and isinstance(d[key], int):
            out[key] = TINY_SIZES["vocab_size"]
    if d.get("q_lora_rank") is not None:  # MLA's low-rank queries kept low-rank (a config may require it)
        out["q_lora_rank"] = TINY_Q_LORA
    out.update(num_attention_heads=heads, num_key_value_heads=kv_heads, hidden_size=hidden,
               intermediate_size=MLP_RATIO * hidden)
    if "n_inner" in d:  # GPT-J's MLP width (4 x hidden where it is null)
        out["n_inner"] = MLP_RATIO * hidden
    heads = [d.get(k) for k in ("num_attention_heads", "num_key_value_heads")]
    if heads[1] is None or heads[0] == heads[1]:  # multi-head attention (MLA's among it) stays so: a head per key
        out["num_key_value_heads"] = out["num_attention_heads"]
    for key in ("moe_intermediate_size", "shared_expert_intermediate_size"):
        if key in d:
            out[key] = hidden
    if "head_dim" in d or "qk_rope_head_dim" not in d:
        out["head_dim"] = expect.head_dim
    if "qk_rope_head_dim" in d:  # MLA: the RoPE slice of q and k is the expectation's head
        out["qk_rope_head_dim"] = expect.head_dim
    layers = d.get("num_hidden_layers", TINY["num_hidden_layers"])
    keep = list(range(TINY["num_hidden_layers"]))
    if isinstance(d.get("layer_types"), list) and d["layer_types"]:  # the first layer of each type, in order
        types = d["layer_types"]
        keep = sorted({types.index(t) for t in types})
        keep = keep if len(keep) > 1 else keep + [keep[0] + 1]
    for key, value in d.items():  # every per-layer list, at the layers kept
        if isinstance(value, list) and len(value) == layers and layers > 1:
            out[key] = [value[i] for i in keep]
        elif isinstance(value, dict) and value and all(str(k).isdigit() and int(k) < layers for k in value):
            # a per-layer table keyed by layer index (Gemma 4's per_layer_config): the kept layers', renumbered
            out[key] = {new: value[k] for k in value for new, old in enumerate(keep) if int(k) == old}
    out["num_hidden_layers"] = len(keep)
    out.update(pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return out


def config_file(path: str):
    """make(expect): a tiny model of ``path``'s own config class, the config.json's every field kept but its sizes
    (TINY_SIZES, one layer of each layer type), random weights, float64. Its RoPE is the config's as written where
    the expectation is the config's own (the default for a config.json TARGET); an expectation that differs (a
    property's, such as model.length's shortened original length) is written over it."""
    name = str(path)

    def make(expect):
        try:
            import torch  # noqa: F401  (the model's arrays: a missing torch is said here)
            import transformers
        except ImportError:
            raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
        if expect.dtype != "float64":
            raise NotImplementedError("a tiny model is checked in float64, --dtype float64 (its logits to the "
                                      "float64 forward's rounding)")
        d = json.loads(Path(name).read_text())
        model_type = d.get("model_type")
        if model_type is None:
            raise NotImplementedError(f"{name}: no model_type (a model's config.json names its class by it)")
        if model_type not in transformers.models.auto.configuration_auto.CONFIG_MAPPING:
            remote = " (its auto_map names the hub repository's own code: remote code is not run here)" \
                if "auto_map" in d else ""
            raise NotImplementedError(f"{name}: model_type {model_type!r} is not a model of transformers "
                                      f"{transformers.__version__}{remote}")
        key = (name, expect)
        if key not in _BUILT:
            own = from_hf_config(d)
            ours = dataclasses.replace(expect, dtype=own.dtype, max_position=own.max_position) == own
            try:
                config = _config_from_file(d, model_type, expect, ours)
                model_cls = _model_class(type(config))
                wants = getattr(model_cls, "config_class", None)
                if isinstance(wants, type) and not isinstance(config, wants):  # a text-only LM of a composite config
                    config = config.get_text_config()
            except Exception as e:  # noqa: BLE001  (a config this builder cannot shrink: said, never a verdict)
                raise NotImplementedError(f"{name}: the tiny {model_type} model could not be built from it "
                                          f"({type(e).__name__}: {str(e)[:200]})") from None
            _BUILT.clear()
            _BUILT[key] = _construct(model_cls, config, name, model_type)
        return copy.deepcopy(_BUILT[key])

    make.__name__ = make.__qualname__ = Path(name).name
    make.__doc__ = f"transformers' model of {name}, tiny."
    return make


#: layers that keep a recurrent state instead of attending (hybrid models), by their class names: transformers'
#: reference kernels for them compute in float32 whatever the model's dtype
RECURRENT = ("GatedDeltaNet", "Mamba", "LinearAttention", "ShortConv", "RecurrentBlock", "Rwkv")


def _float64_throughout(model, name: str) -> None:
    """A model whose logits are float64's: the model family bounds them so (model_logits_bound). A hybrid's recurrent
    layers are computed in float32 by transformers' reference kernels on a CPU: declined, with the layer named."""
    layers = sorted({type(m).__name__ for m in model.modules() if any(r in type(m).__name__ for r in RECURRENT)})
    if layers:
        raise NotImplementedError(f"{name}: its {layers[0]} layers (a recurrent state) are computed in float32 by "
                                  "transformers whatever the model's dtype, and the model family bounds a float64 "
                                  "model's logits: not checked here")


#: a tiny model's sliding window, where its config has one: a row of three windows is a few tokens (model.window), and a
#: window of the config's 4096 keys would need 4096 tokens a case to be seen
TINY_WINDOW = 4


def _implementations(config) -> None:
    """A sliding window shrunk to TINY_WINDOW keys; sdpa attention (eager softmaxes in float32, where float64's mask fill is -inf: NaN rows) and the eager loop over
    a mixture's experts (grouped_mm takes no float64), on the config and its text config."""
    for c in {id(config): config, id(config.get_text_config()): config.get_text_config()}.values():
        if isinstance(getattr(c, "sliding_window", None), int) and c.sliding_window > TINY_WINDOW:
            c.sliding_window = TINY_WINDOW
        c._attn_implementation = "sdpa"
        c._experts_implementation = "eager"


def _construct(model_cls, config, name: str, model_type: str):
    """The tiny model, float64, seed 0, sharpened, with sdpa attention; what cannot be built or run so is said (a
    NotImplementedError: nothing checked, and why), never a verdict on the model. Eager attention is not a fallback:
    it softmaxes in float32, where a float64 model's mask (float64's min) is -inf, and a left pad's NaN row reaches
    the real tokens through its zero weights (0 x NaN)."""
    import torch

    _sized(model_cls, config, name)
    torch.manual_seed(0)
    try:
        model = model_cls(config).double().eval()
    except ValueError as e:
        if "does not support an attention implementation" in str(e):
            raise NotImplementedError(f"{name}: {model_cls.__name__} has no sdpa attention, and its eager attention "
                                      "softmaxes a float64 model's -inf mask in float32 (NaN rows under left "
                                      "padding): not checked in float64") from None
        raise NotImplementedError(f"{name}: the tiny model could not be built ({type(e).__name__}: "
                                  f"{str(e)[:200]})") from None
    except Exception as e:  # noqa: BLE001  (said, never a verdict)
        raise NotImplementedError(f"{name}: the tiny model could not be built ({type(e).__name__}: "
                                  f"{str(e)[:200]})") from None
    try:
        _sharpen(model)
    except Exception as e:  # noqa: BLE001  (its projections are not plain Linear layers: said, never a verdict)
        raise NotImplementedError(f"{name}: its q and k projections could not be scaled up ({type(e).__name__}: "
                                  f"{str(e)[:160]}), and a uniform attention would hide a wrong position") from None
    _float64_throughout(model, name)
    _smoke(model, name, model_type)
    _float64_noise(model, name)
    return model


#: the most bytes a tiny model's float64 parameters may hold: the battery's models hold a few MB; one past this is a
#: tower or a table this builder does not shrink (an audio encoder, per-layer embeddings of the full vocabulary)
TINY_BYTES = 2**30


def _sized(model_cls, config, name: str) -> None:
    """The tiny model's size, counted on the meta device before it is built: past TINY_BYTES it is said, not built."""
    import torch

    try:
        with torch.device("meta"):
            n = sum(p.numel() for p in model_cls(config).parameters())
    except Exception:  # noqa: BLE001  (building it for real says why)
        return
    if 8 * n > TINY_BYTES:
        raise NotImplementedError(f"{name}: its tiny model would hold {8 * n / 2**30:.1f} GB of float64 parameters "
                                  f"({n:,}: a part of it this builder does not shrink): not built")


def _float64_noise(model, name: str) -> None:
    """Each of three rows' logits alone against the same row in a batch of three, and against it from its cache: a model
    computed in float64 throughout gives them to model_logits_bound; one that differs by more, but within float32's
    bound, computes somewhere in float32 whatever its dtype (a router's softmax, a complex RoPE in float32), and the
    float64 bound would fail it for its rounding: said, and not checked here. A difference past float32's bound is a
    fault of the model's, and the properties judge it."""
    import torch

    rows = torch.tensor([[3, 4, 5, 6, 7], [9, 8, 7, 6, 5], [11, 2, 13, 4, 15]])
    diffs = []
    with torch.no_grad():
        batch = model(input_ids=rows).logits
        for r in range(len(rows)):  # float32's rounding shows on some rows and not others: each row of three
            ids = rows[r:r + 1]
            alone = model(input_ids=ids).logits
            diffs.append((alone - batch[r:r + 1]).abs().max().item())
            kept = cache_of(model(input_ids=ids[:, :3], use_cache=True))
            if kept is not None:
                steps = model(input_ids=ids[:, 3:], use_cache=True, **{cache_keyword(model): kept}).logits
                if steps.shape == alone[:, 3:].shape:
                    diffs.append((alone[:, 3:] - steps).abs().max().item())
    worst = max(diffs)
    logits = alone.double().numpy()
    tight, loose = tolerance.model_logits_bound("float64", logits), tolerance.model_logits_bound("float32", logits)
    if tight < worst <= loose:
        raise NotImplementedError(f"{name}: a row's logits alone, in a batch of three and from its cache differ by "
                                  f"{worst:.2g}, float32's rounding (float64's bound: {tight:.2g}): it computes in "
                                  "float32 somewhere whatever its dtype, and the model family bounds a float64 model's "
                                  "logits: not checked here")


def _smoke(model, name: str, model_type: str) -> None:
    """One left-padded forward of the model as built, before any property: a model this builder shrank into one that
    cannot run in float64 with sdpa attention is said and skipped here, never taken for the model's fault; so is one
    whose forward multiplies its activations below float64 (:func:`_below_float64`)."""
    import torch

    try:
        with torch.no_grad(), _below_float64(model) as found:
            model(input_ids=torch.tensor([[3, 4, 5], [0, 6, 7]]), attention_mask=torch.tensor([[1, 1, 1], [0, 1, 1]]))
    except Exception as e:  # noqa: BLE001
        raise NotImplementedError(f"{name}: the tiny {model_type} model does not run a forward in float64 with sdpa "
                                  f"attention ({type(e).__name__}: {str(e)[:200]})") from None
    if found:
        where, op, dtype = found[0]
        what = "a matrix product" if op in SUMS else "an element-wise transcendental"
        raise NotImplementedError(f"{name}: its {where} computes {what} ({op}) of the activations in {dtype} "
                                  "whatever the model's dtype (its rounding depends on the batch's shape), and the "
                                  "model family bounds a float64 model's logits: not checked here")


#: the aten ops whose rounding below float64 depends on the batch's shape, so that two forwards of one row (alone and
#: in a batch, whole and from a cache) differ by float32's rounding, 1e-7 of the logits: a matrix product's (its
#: blocking sums in another order), and an element-wise transcendental's (its kernel runs vectors over the flattened
#: tensor and a scalar tail, which round differently: an element's rounding depends on where the tensor's length puts
#: it; MiniMax-M2's float32 router sigmoid). A norm's mean over one token's features (RMSNorm's float32 variance), a
#: softmax over one row and the basic operations, correctly rounded, are computed alike in every forward: not these
SUMS = ("mm", "bmm", "addmm", "baddbmm", "matmul", "linear", "dot", "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention_for_cpu")
TRANSCENDENTALS = ("sigmoid", "silu", "gelu", "softplus", "tanh", "erf", "exp", "expm1", "log", "log1p", "sin", "cos",
                   "mish", "elu")
VARIES = SUMS + TRANSCENDENTALS


def _below_float64(model):
    """A context in which the model's forward is watched: every tensor computed from its token embeddings is followed,
    and each op of them whose rounding depends on the batch's shape (VARIES) whose result is in a dtype below float64 is
    recorded as (the module computing it, the
    op, the dtype). The RoPE's own tables (float32 angles from the positions alone, as transformers computes them) are
    no activations: each position's are the same in every forward."""
    import contextlib
    import weakref

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    followed: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    modules: list[str] = []
    found: list = []

    def follow(t):
        followed[id(t)] = t

    def is_followed(t) -> bool:
        return followed.get(id(t)) is t

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if any(isinstance(a, torch.Tensor) and is_followed(a) for a in tree_flatten((args, kwargs))[0]):
                for o in tree_flatten(out)[0]:
                    if isinstance(o, torch.Tensor):
                        follow(o)
                        if (o.is_floating_point() and o.dtype != torch.float64 and not found
                                and func.overloadpacket.__name__ in VARIES):
                            found.append((modules[-1] if modules else "forward", func.overloadpacket.__name__,
                                          str(o.dtype).replace("torch.", "")))
            return out

    def left(module, args, out) -> None:  # a hook that returns None leaves the module's output as it is
        if modules:
            modules.pop()

    @contextlib.contextmanager
    def watching():
        handles = [model.get_input_embeddings().register_forward_hook(lambda m, a, out: follow(out) and None)]
        for name, m in model.named_modules():
            handles.append(m.register_forward_pre_hook(lambda m, a, n=name: modules.append(n or "forward")))
            handles.append(m.register_forward_hook(left))
        try:
            with Watch():
                yield found
        finally:
            for h in handles:
                h.remove()

    return watching()


def _config_from_file(d: dict, model_type: str, expect, ours: bool):
    """The tiny config of a config.json: its text config shrunk (one layer of each of the layer types its config class
    gives the full model), a multimodal model's vision tower tiny, and the expectation's RoPE written over the
    config's where it is not the config's own."""
    import transformers

    def build(fields: dict):
        cls = type(transformers.AutoConfig.for_model(model_type))
        alias = getattr(cls, "attribute_map", {})  # layer_types may name a read-only property (layers_block_type)
        derived = {k for k in fields if isinstance(getattr(cls, alias.get(k, k), None), property)
                   and getattr(cls, alias.get(k, k)).fset is None}  # computed from others: read-only
        return transformers.AutoConfig.for_model(model_type, **{k: v for k, v in fields.items()
                                                                 if k not in NOT_KEPT and k != "model_type"
                                                                 and k not in derived})

    nested = isinstance(d.get("text_config"), dict)
    full = build(d).get_text_config()  # the full model's layers, as its config class lays them out (no weights)
    types = getattr(full, "layer_types", None)
    text = _tiny_text({**(d["text_config"] if nested else d), "num_hidden_layers": full.num_hidden_layers,
                       **({"layer_types": list(types)} if types else {})}, expect)
    if not ours:
        for key in ("rope_scaling", "rope_theta", "partial_rotary_factor"):
            text.pop(key, None)
        text.update(_rope_fields(expect))
    config = build(_ids_in_vocab({**d, "text_config": text} if nested else text, text["vocab_size"]))
    vision = getattr(config, "vision_config", None)
    if vision is not None:  # built and never used (the text path): tiny
        for key, value in TINY_VISION.items():
            if hasattr(vision, key):
                setattr(vision, key, value)
        if hasattr(vision, "embed_dim"):  # Qwen2-VL's: embed_dim the tower's width, hidden_size its output's
            vision.hidden_size = text["hidden_size"]
        if hasattr(vision, "out_hidden_size"):
            vision.out_hidden_size = text["hidden_size"]
        for key in ("fullatt_block_indexes", "deepstack_visual_indexes"):
            if hasattr(vision, key):
                setattr(vision, key, [0])
    _implementations(config)
    return config


def _ids_in_vocab(fields: dict, vocab: int) -> dict:
    """``fields`` with every special token's id (``*_token_id``, ``*_token_index``, at the top and in each sub-config)
    that the shrunk vocabulary lacks moved to the top of it (vocab - 1, vocab - 2, ...; one old id one new id): a
    multimodal model embeds its placeholder tokens' ids (an image's, an audio's) from its text embeddings, and the full
    vocabulary's ids are past the tiny one. The tokens drawn are far below them."""
    moved: dict[int, int] = {}

    def special(key: str, value) -> bool:
        return (isinstance(key, str) and key.endswith(("_token_id", "_token_index")) and isinstance(value, int)
                and not isinstance(value, bool) and value >= vocab)

    def walk(d: dict) -> dict:
        out = {}
        for key, value in d.items():
            if special(key, value):
                out[key] = moved.setdefault(value, vocab - 1 - len(moved))
            elif isinstance(value, dict):
                out[key] = walk(value)
            else:
                out[key] = value
        return out

    return walk(fields)


def _model_class(config_cls):
    """A config class's causal LM, else its image-text-to-text model (a VLM's, driven on its text path)."""
    import transformers

    for auto in (transformers.AutoModelForCausalLM, transformers.AutoModelForImageTextToText):
        if config_cls in auto._model_mapping:
            return auto._model_mapping[config_cls]
    raise ValueError(f"no causal LM or image-text-to-text model for {config_cls.__name__}")


llama = factory("llama")
phi3 = factory("phi3")
qwen2_vl = factory("qwen2_vl")


def __getattr__(name: str):
    """Every other model type of the installed transformers, by its name: ``hf_model:mistral``."""
    if name.startswith("_"):
        raise AttributeError(name)
    return factory(name)
