"""transformers' reading, the reference one: ``AutoConfig`` on the folder, then the model type's own rotary embedding
class and apply function built from that config (:mod:`ropespec.implementations.adapters.hf_models` finds them), called
as its attention calls them."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from ropespec.implementations.adapters import hf_models
from ropespec.implementations.adapters.hf import attention_call
from ropespec.implementations.libraries import Library, Unreadable
from ropespec.spec.hfconfig import checked_layer_type


class Transformers(Library):
    name = "transformers"
    distribution = "transformers"
    module = "transformers"
    extra = "hf"
    order = 0

    def rope(self, folder: Path):
        import transformers

        transformers.logging.set_verbosity_error()  # its advice on the config's keys is no reading
        cfg = transformers.AutoConfig.from_pretrained(str(folder))
        text = cfg.get_text_config()
        from transformers.models.auto.configuration_auto import model_type_to_module_name

        found = None
        for model_type in dict.fromkeys((text.model_type, model_type_to_module_name(text.model_type), cfg.model_type)):
            try:  # a text config's model type (gemma3_text) is its module's (gemma3) where it has none of its own
                found = hf_models._found(model_type)
                break
            except ValueError as e:
                said = e
        if found is None:
            raise Unreadable(f"transformers: {said}")
        if not found.checkable or found.takes != "qk":
            why = found.reason or "its apply function is not (q, k, cos, sin)"
            raise Unreadable(f"transformers' {found.model_type}: {why}")
        modeling = importlib.import_module(found.module)
        rotary = getattr(modeling, found.rotary)(config=text)
        layer = checked_layer_type(getattr(text, "rope_parameters", None))
        extra = (layer,) if layer is not None and "layer_type" in inspect.signature(rotary.forward).parameters else ()
        call = attention_call(rotary, getattr(modeling, found.apply), extra)

        def f(x, positions):
            import torch

            return call(torch.from_numpy(x), torch.from_numpy(positions)).numpy()

        return f
