"""Every model type of the installed transformers whose modeling module has a rotary embedding of its own, found by
name and signature (no hand list), and each one's rotary code as a factory.

    ropespec check implementations.adapters.hf_models:stablelm --array torch --expect stablelm.json

:func:`discover` lists every model type whose ``modeling_<module>.py`` defines a ``*RotaryEmbedding`` class, with
what makes it checkable or why it is not (an apply function without the ``(q, k, cos, sin)`` signature, a rotary
embedding that takes multi-axis position ids, a config the class defaults cannot build, a config the config.json
reader cannot read). ``hf_models:<model_type>`` is the factory of one of them: it builds the rotary embedding from the
model type's config class with its defaults (no weights), and calls it and the module's own ``apply_rotary_pos_emb``
as the model's attention does (:func:`implementations.adapters.hf.attention_call`, which the hand-written factories
share: where the table covers only the first dims and the apply function does not split them off itself, the
pass-through is joined as StableLM's and Persimmon's attention joins it).
Where the config reads pairs interleaved (``rope_interleave``) the apply function is
``apply_rotary_pos_emb_interleave``, and where it holds one ``rope_parameters`` per layer type the full-attention
layers' table is the one checked, as the attention of those layers calls them. The factory computes the default
config's RoPE only: :func:`expectation` (the config.json reader on that config's
``to_dict()``) says which, and any other expectation is declined, so a verdict is about the model's own code under its
own defaults. Needs ``transformers`` and ``torch`` (``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

from implementations.adapters.hf import attention_call
from spec.hfconfig import from_hf_config

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
    """(model type, module, config class) of every modeling module whose source defines a ``*RotaryEmbedding`` class,
    read without importing it: one per module, the module's own model type where several share it (qwen2_vl, not
    qwen2_vl_text)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, model_type_to_module_name

    models = _transformers_models()
    by_module: dict[str, list[tuple[str, str]]] = {}
    for model_type, config in sorted(CONFIG_MAPPING_NAMES.items()):
        module = model_type_to_module_name(model_type)
        path = models / module / f"modeling_{module}.py"
        if path.is_file() and re.search(r"^class \w*RotaryEmbedding\(", path.read_text(), re.M):
            by_module.setdefault(module, []).append((model_type, config))
    out = []
    for module, types in sorted(by_module.items()):
        model_type, config = min(types, key=lambda t: (t[0] != module, len(t[0]), t[0]))
        out.append((model_type, module, config))
    return tuple(out)


def _inspect(model_type: str, module: str, config: str) -> Found:
    name = f"transformers.models.{module}.modeling_{module}"
    found = Found(model_type, name, config)
    try:
        modeling = importlib.import_module(name)
    except Exception as e:
        return _with(found, reason=f"its modeling module does not import: {type(e).__name__}: {e}")
    mine = lambda obj: getattr(obj, "__module__", None) == name  # noqa: E731  defined here, not imported
    rotaries = [n for n, obj in vars(modeling).items() if inspect.isclass(obj) and n.endswith("RotaryEmbedding")
                and mine(obj) and not re.search(r"Vision|Visual|Audio|Patch|2D|3D", n)]
    if not rotaries:
        return _with(found, reason="its only rotary embeddings are a vision or audio tower's")
    rotary = min(rotaries, key=len)  # the text model's (Qwen2VLRotaryEmbedding before Qwen2VLTextRotaryEmbedding)
    applies = [n for n, obj in vars(modeling).items() if n.startswith("apply_rotary_pos_emb") and inspect.isfunction(obj)
               and list(inspect.signature(obj).parameters)[:4] == ["q", "k", "cos", "sin"]]
    found = _with(found, rotary=rotary)
    # the function its attention calls: the interleave one where the config reads pairs interleaved (DeepSeek-V3's MLA)
    wanted = ("apply_rotary_pos_emb_interleave" if _rope_interleave(found) else "apply_rotary_pos_emb")
    if wanted not in applies:
        return _with(found, reason=f"no {wanted}(q, k, cos, sin) of its own"
                     + (f" (it has {', '.join(applies)})" if applies else ""))
    if "mrope" in inspect.getsource(getattr(modeling, rotary).forward):  # one row of positions per axis
        return _with(found, reason="multi-axis RoPE (M-RoPE position ids): the hf_axes adapters check these")
    params = inspect.signature(getattr(modeling, rotary).forward).parameters
    forward = list(params)
    required = [p for p in forward[3:] if p != "layer_type" and params[p].default is inspect.Parameter.empty]
    if forward[:3] != ["self", "x", "position_ids"] or required:
        return _with(found, apply=wanted,
                     reason=f"its rotary embedding's forward takes ({', '.join(forward[1:])}), not (x, position_ids)")
    found = _with(found, apply=wanted)
    try:
        expect = expectation_of(found)
    except Exception as e:  # the config.json reader cannot read the default config: said, and the reader's to mend
        return _with(found, reason=f"the config.json reader: {e}")
    if expect.multi_axis:
        return _with(found, reason="multi-axis RoPE (M-RoPE position ids): the hf_axes adapters check these")
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
                                       "even for text: the hf_axes adapters check these")
    return found


def _rope_interleave(f: Found) -> bool:
    try:
        return bool(getattr(_rotary_config(f), "rope_interleave", False))
    except Exception:  # the config does not build: said where it is built
        return False


def _layer_type(config) -> str | None:
    """The layer type whose table is checked where a config holds one rope_parameters per layer type (Gemma 3,
    ModernBERT, OLMo 3): full attention's, as the config.json reader reads them, else the first by name that has
    RoPE."""
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and params and all(isinstance(v, dict) or v is None for v in params.values()):
        with_rope = sorted(k for k, v in params.items() if isinstance(v, dict))  # None: no RoPE there (BEAM)
        return "full_attention" if "full_attention" in with_rope else with_rope[0] if with_rope else None
    return None


def _with(found: Found, **changes) -> Found:
    return Found(**{**found.__dict__, **changes})


def _found(model_type: str) -> Found:
    for f in discover((model_type,)):
        if f.model_type == model_type:
            return f
    raise ValueError(f"model_type {model_type!r}: no rotary embedding class of its own in this transformers")


def _rotary_config(f: Found):
    """The config the model type's rotary embedding is built from: the sub-config its ``__init__``'s annotation names
    (PE Video's encoder config), else the text model's."""
    import transformers

    cfg = getattr(transformers, f.config)()
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    if f.rotary is None:
        return text
    wanted = inspect.signature(getattr(importlib.import_module(f.module), f.rotary).__init__).parameters.get("config")
    name = getattr(wanted.annotation, "__name__", wanted.annotation) if wanted is not None else None
    # a sub-config the annotation names (an encoder's); not the outer config, which some annotate but whose model
    # hands its text config over (Qwen2-VL)
    subs = [text, *(v for v in vars(cfg).values() if isinstance(v, transformers.PretrainedConfig))]
    return next((c for c in subs if isinstance(name, str) and type(c).__name__ == name), text)


def expectation(model_type: str):
    """The expectation the config.json reader makes of the model type's default config."""
    return expectation_of(_found(model_type))


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
        if differ:
            raise NotImplementedError(f"this adapter computes {model_type}'s default config only "
                                      f"({', '.join(f'{k} {getattr(own, k, None)!r}' for k in differ)})")
        return _rope(f)

    make.__name__ = make.__qualname__ = model_type
    make.__doc__ = f"transformers' {model_type} rotary code under its config class's defaults."
    return make


def _rope(f: Found):
    modeling = importlib.import_module(f.module)
    config = _rotary_config(f)
    rotary = getattr(modeling, f.rotary)(config=config)
    layer = _layer_type(config)
    extra = (layer,) if layer is not None and "layer_type" in inspect.signature(rotary.forward).parameters else ()
    return attention_call(rotary, getattr(modeling, f.apply), extra)


def __getattr__(name: str):
    """``hf_models:<model_type>``: the factory of any model type :func:`discover` finds."""
    if name.startswith("_"):
        raise AttributeError(name)
    return factory(name)


__all__ = ["Found", "candidates", "discover", "expectation", "expectation_of", "factory"]
