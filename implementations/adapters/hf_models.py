"""Every model type of the installed transformers whose modeling module has RoPE of its own, found by its source (no
hand list), and each one's rotary code as a factory.

    ropespec check ropespec.implementations.adapters.hf_models:stablelm --array torch --expect stablelm.json

:func:`discover` lists every model type whose ``modeling_<module>.py`` has RoPE (a rotary class of any name, or rotary
functions), with what makes it checkable here or why it is not (a RoPE of another form, :data:`OTHER_FORMS`; an attention whose apply function takes neither ``(q, k, cos, sin)`` nor
``(x, cos, sin)``, a rotary embedding that takes multi-axis position ids, a config the class defaults cannot build, a
config the config.json reader cannot read). ``hf_models:<model_type>`` is the factory of one of them: it builds the
rotary embedding from the model type's config class with its defaults (no weights), and calls it and the apply
function the module's text attention calls (named in the source of its ``*Attention*``/``*MLA*`` classes: a sparse
attention's indexer is not the attention; where it calls both, the config's ``rope_interleave`` picks, as DeepSeek-V3's
does) as that attention calls them (:func:`ropespec.implementations.adapters.hf.attention_call`, which the hand-written
factories share: where the table covers only the first dims and the apply function does not split them off itself,
the pass-through is joined as StableLM's and Persimmon's attention joins it; an ``(x, cos, sin)`` one is called for
the queries, then the keys, as Gemma 4's attention calls it). Where the config holds one ``rope_parameters`` per layer
type, the layer type :func:`ropespec.spec.hfconfig.checked_layer_type` names is the one checked, in the reader and here. The
factory computes the default config's RoPE only: :func:`expectation` (the config.json reader on that config's
``to_dict()``) says which, with the released model's values where the class defaults are no model (:data:`RELEASED`),
and any other expectation is declined, so a verdict is about the model's own code under its own defaults.
:func:`adapters` names the adapters that check what this factory cannot call (hf_axes', hf's, hf_other's), each under
its preset or the reader's expectation: the transformers sweep runs both. Needs ``transformers`` and ``torch`` (``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ropespec.implementations.adapters import hf_axes
from ropespec.implementations.adapters.hf import MODEL_TYPES as HAND_WRITTEN, attention_call, complex_call
from ropespec.spec import presets
from ropespec.spec.hfconfig import checked_layer_type, from_hf_config

ARRAY = "torch"
#: the expectation's fields the default config fixes (dtype and how far to test are the run's)
_FIXED = ("head_dim", "rope_theta", "convention", "rotary_dim", "rope_scaling", "mrope_section", "mrope_interleaved",
          "axes_dims_rope", "axes_parity")


@dataclass(frozen=True)
class Found:
    """One model type with a rotary embedding class of its own: how to build and call it, or why it is not checked."""

    model_type: str
    module: str  # transformers.models.<module>.modeling_<module>
    config: str  # its config class
    rotary: str | None = None
    apply: str | None = None
    takes: str = "qk"  # how the apply function is called (_form)
    reason: str | None = None  # None: checkable

    @property
    def checkable(self) -> bool:
        return self.reason is None


def _transformers_models() -> Path:
    import transformers

    return Path(transformers.__file__).parent / "models"


@functools.lru_cache(maxsize=None)
def discover(only: tuple[str, ...] | None = None) -> tuple[Found, ...]:
    """Every model type whose modeling module defines a ``*RotaryEmbedding`` class (read from the source, then
    imported and inspected; one per module, the module's own model type where several share it), checkable or with
    the reason it is not (its expectation unreadable among them). ``only``: these model types alone (each module is
    imported to be inspected: all of them take about 10 s)."""
    return tuple(_inspect(model_type, module, config) for model_type, module, config in candidates()
                 if only is None or model_type in only)


@functools.lru_cache(maxsize=None)
def candidates() -> tuple[tuple[str, str, str], ...]:
    """(model type, module, config class) of every modeling module whose source is a RoPE model's (_ROPE_SOURCE: a
    ``*RotaryEmbedding`` class, a rotary class of another name, rotary functions), read without importing it: one per
    module, the module's own model type where several share it (qwen2_vl, not qwen2_vl_text)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, model_type_to_module_name

    models = _transformers_models()
    by_module: dict[str, list[tuple[str, str]]] = {}
    for model_type, config in sorted(CONFIG_MAPPING_NAMES.items()):
        module = model_type_to_module_name(model_type)
        path = models / module / f"modeling_{module}.py"
        if path.is_file() and re.search(_ROPE_SOURCE, path.read_text(), re.M):
            by_module.setdefault(module, []).append((model_type, config))
    out = []
    for module, types in sorted(by_module.items()):
        model_type, config = min(types, key=lambda t: (t[0] != module, len(t[0]), t[0]))
        out.append((model_type, module, config))
    return tuple(out)


#: what makes a modeling module's source a RoPE model's: a ``*RotaryEmbedding`` class (the form :func:`factory` calls),
#: a rotary or RoPE class of another name (DINOv3's RopePositionEmbedding, the Conformers' RotaryPositionalEmbedding,
#: V-JEPA 2's RopeAttention), or rotary functions without a class (RoFormer's; and a language model's borrowed
#: rotary, or an apply_rotary_pos_emb its attention never calls: OTHER_FORMS says which)
_ROPE_SOURCE = (r"^class \w*(Rotary|Rope|RoPE)\w*\(|^\s*def (apply_rotary\w*|rotate_half\w*|\w*rope\w*)\(")

#: the model types whose RoPE is of another form (their source matches _ROPE_SOURCE by no ``*RotaryEmbedding`` class,
#: or their rotary turns something else than token positions): what their RoPE is, and the adapter that checks it
#: (None: none does, the reason said); a model type found so and not named here is no RoPE model where it calls none of
#: the apply functions it defines (:func:`_unused_applies`), else "a RoPE of another form that no adapter checks yet"
OTHER_FORMS: dict[str, tuple[str | None, str]] = {
    "roformer": ("ropespec.implementations.adapters.hf_other:roformer",
                 "RoFormer's sinusoidal table and apply_rotary_position_embeddings"),
    "wav2vec2-conformer": ("ropespec.implementations.adapters.hf_other:wav2vec2_conformer",
                           "a Conformer's rotary on the attention's input (position_embeddings_type rotary)"),
    "wav2vec2-bert": ("ropespec.implementations.adapters.hf_other:wav2vec2_bert",
                      "a Conformer's rotary on the attention's input (position_embeddings_type rotary)"),
    "seamless_m4t": ("ropespec.implementations.adapters.hf_other:seamless_m4t",
                     "its speech encoder's Conformer rotary on the attention's input (position_embeddings_type rotary)"),
    "dinov3_vit": (None, "DINOv3's RopePositionEmbedding of patch centres: hf_axes:dinov3 checks it"),
    "sapiens2": (None, "DINOv3's RopePositionEmbedding of patch centres: hf_axes:sapiens2 checks it"),
    "clvp": ("ropespec.implementations.adapters.hf_other:clvp",
             "its encoders' rotary over max(projection_dim // (2 heads), 32) dims, which its attention applies to q, k "
             "and v"),
    "vjepa2": ("ropespec.implementations.adapters.hf_other:vjepa2",
               "V-JEPA 2's 3-D RoPE (rotate_queries_or_keys), which is no rotation (docs/findings.md, \"V-JEPA 2\")"),
    "lightglue": (None, "not a RoPE to check: its frequencies are learned weights (a Linear(2, head_dim / 2) of the "
                        "keypoints' continuous coordinates)"),
    "glm46v": (None, "its language model is glm4v_text's, checked as glm4v (hf_axes:glm4v)"),
    "cosmos3_omni": (None, "its language model is qwen3_vl_text's, checked as qwen3_vl"),
    "minicpmv4_7": (None, "its language model is qwen3_5_text's, checked as qwen3_5"),
    "parakeet_ctc": (None, "not a RoPE model: Transformer-XL relative positions; apply_rotary_pos_emb is never called"),
    "nemotron_asr_streaming": (None, "not a RoPE model: Transformer-XL relative positions; apply_rotary_pos_emb is "
                                     "never called"),
    "pp_doclayout_v2": (None, "not a RoPE model: a sinusoidal embedding of box relations as an additive attention bias"),
    "esmfold2": (None, "not a RoPE of positions to check: its atom encoder turns by 3-D atom coordinates (a base of 20 "
                       "on x, y and z) beside a group index (base 1e4), a base per kind of coordinate"),
    "musicflamingo": (None, "not a RoPE to check: it turns the audio encoder's output (no queries or keys) by a window "
                            "index times its timestamp in seconds, derived from the input; no relative position to keep"),
}


#: the preset an OTHER_FORMS adapter is checked under where the config.json reader cannot read its model's config
OTHER_PRESETS = {"vjepa2": "vjepa2-vitl", "clvp": "clvp"}


def _inspect(model_type: str, module: str, config: str) -> Found:
    name = f"transformers.models.{module}.modeling_{module}"
    found = Found(model_type, name, config)
    source = (_transformers_models() / module / f"modeling_{module}.py").read_text()
    if model_type in OTHER_FORMS or not re.search(r"^class \w*RotaryEmbedding\(", source, re.M):
        target, what = OTHER_FORMS.get(model_type, (None, _unused_applies(source) or
                                                    "a RoPE of another form that no adapter checks yet"))
        return _with(found, reason=what + (f": {target.rsplit('.', 1)[1]} checks it" if target else ""))
    try:
        modeling = importlib.import_module(name)
    except Exception as e:
        return _with(found, reason=f"its modeling module does not import: {type(e).__name__}: {e}")
    mine = lambda obj: getattr(obj, "__module__", None) == name  # noqa: E731  defined here, not imported
    prefix = config.removesuffix("Config")  # the model's own name, which may say Vision or Audio of itself
    rotaries = [n for n, obj in vars(modeling).items() if inspect.isclass(obj) and n.endswith("RotaryEmbedding")
                and mine(obj) and not _tower(n, prefix)]
    if not rotaries:
        return _with(found, reason="its only rotary embeddings are a vision or audio tower's" + _hf_axes_says(model_type))
    rotary = min(rotaries, key=len)  # the text model's (Qwen2VLRotaryEmbedding before Qwen2VLTextRotaryEmbedding)
    found = _with(found, rotary=rotary)
    forms = {n: _form(fn) for n, obj in vars(modeling).items()
             if n.startswith("apply_rotary") and (fn := _function_of(obj)) is not None and mine(fn)}
    called = sorted(_attention_applies(modeling, mine, prefix)) or sorted(n for n in forms if n.startswith("apply_rotary_pos_emb"))
    if {"apply_rotary_pos_emb", "apply_rotary_pos_emb_interleave"} <= set(called):
        # its attention calls the one its config's rope_interleave names (DeepSeek-V3's MLA)
        called = ["apply_rotary_pos_emb_interleave" if _rope_interleave(found) else "apply_rotary_pos_emb"]
    usable = [n for n in called if forms.get(n)]
    if len(usable) != 1:
        return _with(found, reason=_no_apply(model_type, called, forms))
    found = _with(found, apply=usable[0], takes=forms[usable[0]])
    if "mrope" in inspect.getsource(getattr(modeling, rotary).forward):  # one row of positions per axis
        return _with(found, reason="multi-axis RoPE (M-RoPE position ids): the hf_axes adapters check these" + _hf_axes_says(model_type))
    params = inspect.signature(getattr(modeling, rotary).forward).parameters
    forward = list(params)
    required = [p for p in forward[3:] if p != "layer_type" and params[p].default is inspect.Parameter.empty]
    if forward[:3] != ["self", "x", "position_ids"] or required:
        return _with(found,
                     reason=f"its rotary embedding's forward takes ({', '.join(forward[1:])}), not (x, position_ids)")
    axial = _axial_adapter(found)
    if axial is not None:  # a vision model's own 2-D rotary (rope_type axial): the hf_axes adapters' job
        return _with(found, reason=f"a 2-D vision rotary (rope_type axial): {axial}")
    try:
        expect = expectation_of(found)
    except Exception as e:  # the config.json reader cannot read the default config: said, and the reader's to mend
        return _with(found, reason=f"the config.json reader: {e}")
    if expect.multi_axis:
        return _with(found, reason="multi-axis RoPE (M-RoPE position ids): the hf_axes adapters check these" + _hf_axes_says(model_type))
    if "mrope" in inspect.getsource(getattr(modeling, rotary)):
        # an M-RoPE model's text tokens (t = h = w) are 1-D RoPE where its code takes one row of positions, as
        # Qwen2-VL's does; GLM-4V's splits its table by axis and cannot
        try:
            rope = _rope(found)
        except Exception as e:  # the model's own code under its own defaults: said, not hidden as multi-axis
            return _with(found, reason=f"its rotary embedding does not build under its config class's defaults: "
                                       f"{type(e).__name__}: {e}")
        import torch

        try:
            rope(torch.zeros((2, expect.head_dim)), torch.arange(2))
        except Exception:
            return _with(found, reason="multi-axis RoPE whose default config needs M-RoPE position ids (3, batch, n) "
                                       "even for text: the hf_axes adapters check these" + _hf_axes_says(model_type))
    return found


#: words of a class name that make it a vision, audio or image tower's (their rotary embeddings and attention are not
#: the text model's), read after the model's own name (Granite4Vision's text rotary, HiggsAudioV2's language model's)
_TOWER = r"Vision|Visual|Audio|Patch|2D|3D|ViT"


def _tower(name: str, prefix: str) -> bool:
    """Whether class ``name`` is a tower's: a tower word in what follows the model's own name ``prefix`` (its config
    class's name less Config; the whole name where it does not start with it), so that Nemotron3Diarization's '3D'
    or PeAudio's 'Audio' does not make its main model a tower."""
    return bool(re.search(_TOWER, name[len(prefix):] if prefix and name.startswith(prefix) else name))


def _attention_applies(modeling, mine, prefix: str = "") -> set[str]:
    """The apply functions the text model's attention calls: those named in the source of the module's own classes
    named ``*Attention*`` or ``*MLA*`` (a sparse attention's indexer, as DeepSeek-V3.2's, is not its attention)."""
    names: set[str] = set()
    for n, obj in vars(modeling).items():
        if inspect.isclass(obj) and mine(obj) and re.search(r"Attention|MLA", n) and not _tower(n, prefix):
            names.update(re.findall(r"\b(apply_rotary\w*)\(", inspect.getsource(obj)))
    return names


def _unused_applies(source: str) -> str | None:
    """Why a module without a rotary embedding class is no RoPE model, where it is so: it defines apply functions and
    calls none of them (a copy kept beside an attention without RoPE: Jamba's, Nemotron-H's, Zamba's)."""
    defined = sorted(set(re.findall(r"^def (apply_rotary\w*)\(", source, re.M)))
    called = set(re.findall(r"(?<!def )\b(apply_rotary\w*)\(", source))
    if defined and not called:
        return f"not a RoPE model: its attention never calls the {', '.join(defined)} it defines"
    return None


def _function_of(obj):
    """The plain function a modeling module's ``apply_rotary*`` name holds: itself (unwrapped of functools.wraps), or
    the one function a wrapper object's forward calls, as the kernels package's ``use_kernel_forward_from_hub`` makes of
    a function (transformers 5.25 on: an nn.Module instance whose forward calls the model's function, where no hub
    kernel replaces it, as none does on a CPU); None for anything else. Its signature says the form; the module's
    attribute stays what is called, so that a verdict is on what the model's attention calls."""
    if inspect.isfunction(obj):
        return inspect.unwrap(obj)
    forward = getattr(type(obj), "forward", None)
    called = [c.cell_contents for c in getattr(forward, "__closure__", None) or () if inspect.isfunction(c.cell_contents)]
    return inspect.unwrap(called[0]) if len(called) == 1 else None


def _form(fn) -> str | None:
    """How an apply function is called: ``qk`` apply(q, k, cos, sin) -> (q, k), ``x`` apply(x, cos, sin) -> x
    (Gemma 3n, Gemma 4), ``complex`` apply(xq, xk, freqs_cis) -> (q, k) with a complex table (Llama 4, DeepSeek-V2),
    else None."""
    params = list(inspect.signature(fn).parameters)
    if params[:3] == ["xq", "xk", "freqs_cis"]:
        return "complex"
    return "qk" if params[:4] == ["q", "k", "cos", "sin"] else "x" if params[:3] == ["x", "cos", "sin"] else None


def _no_apply(model_type: str, called: list[str], forms: dict) -> str:
    """Why no apply function of the model type's attention can be called as :func:`_rope` calls one."""
    if not called:
        return "no apply_rotary_pos_emb of its own"
    if sum(bool(forms.get(n)) for n in called) > 1:
        reason = f"its attention calls more than one apply function ({', '.join(called)})"
    else:
        reason = (f"its attention calls {', '.join(called)}, not of the form apply(q, k, cos, sin), "
                  f"apply(x, cos, sin) or apply(xq, xk, freqs_cis)")
    if model_type in HAND_WRITTEN:
        reason += f" (ropespec.implementations.adapters.hf:{model_type} checks it, written by hand)"
    return reason


def _rope_interleave(f: Found) -> bool:
    try:
        return bool(getattr(_rotary_config(f), "rope_interleave", False))
    except Exception:  # the config does not build: said where it is built
        return False


def _with(found: Found, **changes) -> Found:
    return Found(**{**found.__dict__, **changes})


def _found(model_type: str) -> Found:
    for f in discover((model_type,)):
        if f.model_type == model_type:
            return f
    raise ValueError(f"model_type {model_type!r}: no rotary embedding class of its own in this transformers")


#: the released model's values where its config class's defaults are no model (no check of those defaults says
#: anything of the code a user runs): transformers' Glm4MoeConfig has GLM-4.5's 96 heads of 4096 / 96 dims and no
#: head_dim, so 21 rotating dims; Qwen3OmniMoeTextConfig 28 heads of 2048 / 28 = 73; CohereCompassTextConfig no
#: rope_parameters at all. Set on the rotary embedding's config before it is built and read.
RELEASED: dict[str, dict] = {
    # the Conformers' rotary path (position_embeddings_type rotary, facebook/wav2vec2-conformer-rope-large's), where
    # the classes default relative positions
    "wav2vec2-conformer": {"position_embeddings_type": "rotary"},
    "wav2vec2-bert": {"position_embeddings_type": "rotary"},
    "seamless_m4t": {"position_embeddings_type": "rotary"},
    "glm4_moe": {"head_dim": 128},  # zai-org/GLM-4.5 (and -Air): head_dim 128, partial_rotary_factor 0.5
    "glm4v_moe": {"head_dim": 128},  # zai-org/GLM-4.5V's text_config: head_dim 128
    "qwen3_omni_moe": {"head_dim": 128, "num_attention_heads": 32},  # Qwen/Qwen3-Omni-30B-A3B-Instruct's thinker
    # CohereLabs/North-Micro-Vision-Instruct: RoPE on its sliding layers only (theta 5e4; its interleaved M-RoPE
    # sections [24, 20, 20] are the rotary embedding's default, and text tokens, one row of positions, turn as 1-D
    # RoPE), none on its full-attention layers
    "cohere_compass": {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 50000.0},
                                           "full_attention": None},
                       "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention",
                                       "full_attention"] * 7},
}


def _rotary_config(f: Found):
    """The config the model type's rotary embedding is built from: the config its ``__init__``'s annotation names
    (PE Video's encoder config, Nemotron 3.5 Transcribe's ASR encoder's, at any depth), else the text model's; where
    that one states no RoPE and a sub-config does (BLT's, Nemotron 3 Diarization's outer config over the towers that
    build the rotary from their own), the first such sub-config. The released model's values (RELEASED) are set on
    it."""
    import transformers

    cfg = getattr(transformers, f.config)()
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    if f.rotary is None:
        return _released(f.model_type, text)
    wanted = inspect.signature(getattr(importlib.import_module(f.module), f.rotary).__init__).parameters.get("config")
    name = getattr(wanted.annotation, "__name__", wanted.annotation) if wanted is not None else None
    # a sub-config the annotation names (an encoder's); not the outer config, which some annotate but whose model
    # hands its text config over (Qwen2-VL)
    subs = [text, *_sub_configs(cfg)]
    chosen = _released(f.model_type, next((c for c in subs if isinstance(name, str) and type(c).__name__ == name), text))
    if not _states_rope(chosen):
        chosen = next((c for c in subs if _states_rope(c)), chosen)
    return chosen


def _sub_configs(cfg) -> list:
    """Every config inside ``cfg``, depth first, in the order its attributes hold them."""
    import transformers

    out = []
    for v in vars(cfg).values():
        if isinstance(v, transformers.PretrainedConfig) and v is not cfg:
            out += [v, *_sub_configs(v)]
    return out


def _states_rope(cfg) -> bool:
    """Whether a config says a RoPE of its own: a rope_theta, or rope_parameters holding one, and a size to turn."""
    d = cfg.to_dict()
    params = d.get("rope_parameters") or d.get("rope_scaling") or {}
    theta = d.get("rope_theta") or (isinstance(params, dict) and (params.get("rope_theta") or any(
        isinstance(v, dict) and v.get("rope_theta") for v in params.values())))
    return bool(theta) and bool(d.get("head_dim") or d.get("hidden_size"))


def _released(model_type: str, cfg):
    for key, value in RELEASED.get(model_type, {}).items():
        setattr(cfg, key, value)
    return cfg


def expectation(model_type: str):
    """The expectation the config.json reader makes of the model type's default config."""
    return expectation_of(_found(model_type))


def _hf_axes_says(model_type: str) -> str:
    """': hf_axes:<model_type> checks it' where an hf_axes adapter builds the model's multi-axis rotary (a vision
    tower's, or a text M-RoPE's), else ''."""
    if model_type in hf_axes.MODELS:
        return f": ropespec.implementations.adapters.hf_axes:{model_type} checks it (tests/test_real_multi_axis.py)"
    return ""


def _axial_adapter(f: Found) -> str | None:
    """Where the model's rotary config says rope_type axial (Pixtral's, MLCD's: a 2-D vision rotary over (h, w)), the
    adapter that checks it, in words; None otherwise."""
    try:
        d = _rotary_config(f).to_dict()
    except Exception:
        return None
    params = d.get("rope_parameters") or d.get("rope_scaling") or {}
    if not isinstance(params, dict) or params.get("rope_type") != "axial":
        return None
    if f.model_type in hf_axes.MODELS:
        return f"ropespec.implementations.adapters.hf_axes:{f.model_type} checks it (tests/test_real_multi_axis.py)"
    return "no hf_axes adapter builds it yet"


def _json(value) -> str:
    return json.dumps(value, separators=(", ", ": "))


def expectation_of(f: Found):
    return from_hf_config({"model_type": f.model_type, **_rotary_config(f).to_dict()})


def factory(model_type: str):
    """make(expect) running ``model_type``'s rotary embedding and apply function on rows x (n, head_dim)."""

    def make(expect):
        try:
            import torch  # noqa: F401

            f = _found(model_type)
        except ImportError:
            raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
        if not f.checkable:
            raise NotImplementedError(f"transformers' {model_type}: {f.reason}")
        own = expectation_of(f)
        differ = [k for k in _FIXED if getattr(own, k, None) != getattr(expect, k, None)]
        if differ:  # each field as the expectation's JSON writes it, the value a user would give in --expect
            mine, theirs = own.to_dict(), expect.to_dict()
            said = "; ".join(f"{k} {_json(mine.get(k))} where the expectation has {_json(theirs.get(k))}"
                             for k in differ)
            raise NotImplementedError(f"this adapter computes {model_type}'s default config only: {said}")
        return _rope(f)

    make.__name__ = make.__qualname__ = model_type
    make.__doc__ = f"transformers' {model_type} rotary code under its config class's defaults."
    return make


@dataclass(frozen=True)
class Adapter:
    """A model type's rotary code that an adapter of its own checks where :func:`factory` cannot call it (a vision
    tower's 2-D RoPE, a text M-RoPE's position ids, GPT-J's sin/cos form) or checks one more side of it (Qwen2-VL's
    vision tower beside its text model): under the preset of the released model, or the config.json reader's
    expectation of the default config."""

    model_type: str
    target: str  # ropespec.implementations.adapters.<module>:<factory>
    preset: str | None = None  # None: the reader's expectation of the model type's default config

    @property
    def label(self) -> str:
        """``hf_axes:qwen2_vl_vision``: the adapter, as the sweep's table names it."""
        return self.target.rsplit(".", 1)[1]

    def expectation(self):
        return presets.get(self.preset) if self.preset else expectation(self.model_type)


def adapters(found: tuple[Found, ...]) -> tuple[Adapter, ...]:
    """The adapters that check ``found``'s model types: every hf_axes adapter of a found model type's module, under its
    preset, and the hand-written adapter of each model type whose form :func:`factory` cannot call."""
    by_module = {f.module.split(".")[-2]: f.model_type for f in found}
    out = [Adapter(by_module[module], f"ropespec.implementations.adapters.hf_axes:{name}", preset)
           for name, (module, preset) in hf_axes.CHECKED_UNDER.items() if module in by_module]
    out += [Adapter(f.model_type, f"ropespec.implementations.adapters.hf:{f.model_type}") for f in found
            if not f.checkable and f.model_type in HAND_WRITTEN]
    out += [Adapter(f.model_type, OTHER_FORMS[f.model_type][0], OTHER_PRESETS.get(f.model_type)) for f in found
            if not f.checkable and OTHER_FORMS.get(f.model_type, (None,))[0]]
    return tuple(out)


def _rope(f: Found):
    modeling = importlib.import_module(f.module)
    config = _rotary_config(f)
    rotary = getattr(modeling, f.rotary)(config=config)
    layer = checked_layer_type(getattr(config, "rope_parameters", None))
    extra = (layer,) if layer is not None and "layer_type" in inspect.signature(rotary.forward).parameters else ()
    apply = getattr(modeling, f.apply)
    if f.takes == "complex":
        return complex_call(rotary, apply, extra)
    if f.takes == "x":  # one tensor at a time, as Gemma 4's attention calls it for its queries, then its keys
        one = apply
        apply = lambda q, k, cos, sin: (one(q, cos, sin), one(k, cos, sin))  # noqa: E731
    return attention_call(rotary, apply, extra)


def __getattr__(name: str):
    """``hf_models:<model_type>``: the factory of any model type :func:`discover` finds."""
    if name.startswith("_"):
        raise AttributeError(name)
    return factory(name)


__all__ = ["Adapter", "Found", "adapters", "candidates", "discover", "expectation", "expectation_of", "factory"]
